package cmdutil

import (
	"io"
	"os"
)

// IO holds the streams a command reads and writes, so tests can capture them.
type IO struct {
	In  io.Reader
	Out io.Writer
	Err io.Writer
}

// StdIO returns the process's standard streams.
func StdIO() IO { return IO{In: os.Stdin, Out: os.Stdout, Err: os.Stderr} }
