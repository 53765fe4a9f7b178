package simfabric

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// consoleMaxLine is ibsim's console line limit (longer lines are cut).
const consoleMaxLine = 127

// consoleTimeout bounds one console round trip. ibsim answers console
// commands between MADs, so only a `Wait` command takes longer.
const consoleTimeout = 30 * time.Second

// prompt is what ibsim prints before reading each console line.
const prompt = "sim> "

// console talks to ibsim's stdin/stdout. ibsim echoes a comment line
// (`# text`) verbatim, without its newline, so every command is followed by
// a unique comment and the reply is everything printed before that echo.
type console struct {
	in io.WriteCloser // ibsim's stdin; closing it makes ibsim spin, so only Stop does

	mu     sync.Mutex // serialises round trips
	serial int

	bufMu   sync.Mutex
	buf     bytes.Buffer  // console output not yet consumed
	notify  chan struct{} // signalled (non-blocking) when buf grows or the reader ends
	done    bool          // ibsim's stdout reached EOF
	readErr error
}

func newConsole(in io.WriteCloser, out io.Reader, transcript io.Writer) *console {
	c := &console{in: in, notify: make(chan struct{}, 1)}
	go c.read(out, transcript)
	return c
}

func (c *console) read(out io.Reader, transcript io.Writer) {
	chunk := make([]byte, 32<<10)
	for {
		n, err := out.Read(chunk)
		if n > 0 {
			transcript.Write(chunk[:n])
			c.bufMu.Lock()
			c.buf.Write(chunk[:n])
			c.bufMu.Unlock()
			c.signal()
		}
		if err != nil {
			c.bufMu.Lock()
			c.done = true
			if !errors.Is(err, io.EOF) && !errors.Is(err, os.ErrClosed) {
				c.readErr = err
			}
			c.bufMu.Unlock()
			c.signal()
			return
		}
	}
}

func (c *console) signal() {
	select {
	case c.notify <- struct{}{}:
	default:
	}
}

// do sends one command (empty: only synchronise) and returns its output with
// ibsim's prompts removed.
func (c *console) do(cmd string) (string, error) {
	if strings.ContainsAny(cmd, "\r\n") {
		return "", fmt.Errorf("console command %q: one line only", cmd)
	}
	if strings.HasPrefix(strings.TrimSpace(cmd), "#") && strings.Contains(cmd, "%") {
		// ibsim prints comment lines with the line as printf format.
		return "", fmt.Errorf("console comment %q: ibsim cannot echo %%", cmd)
	}
	if len(cmd) > consoleMaxLine {
		return "", fmt.Errorf("console command %q: longer than ibsim's %d-character line limit", cmd, consoleMaxLine)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.serial++
	marker := fmt.Sprintf("# simfabric-sync-%d", c.serial)
	msg := marker + "\n"
	if cmd != "" {
		msg = cmd + "\n" + msg
	}
	if _, err := io.WriteString(c.in, msg); err != nil {
		return "", fmt.Errorf("console command %q: %w", cmd, err)
	}
	deadline := time.NewTimer(consoleTimeout)
	defer deadline.Stop()
	searched := 0 // bytes of buf without the marker: a big Dump is megabytes
	for {
		c.bufMu.Lock()
		if i := bytes.Index(c.buf.Bytes()[searched:], []byte(marker)); i >= 0 {
			out := string(c.buf.Next(searched + i))
			c.buf.Next(len(marker))
			c.bufMu.Unlock()
			return trimPrompts(out), nil
		}
		searched = max(0, c.buf.Len()-len(marker))
		done, rerr := c.done, c.readErr
		c.bufMu.Unlock()
		if done {
			if rerr == nil {
				rerr = errors.New("ibsim exited")
			}
			return "", fmt.Errorf("console command %q: %w", cmd, rerr)
		}
		select {
		case <-c.notify:
		case <-deadline.C:
			return "", fmt.Errorf("console command %q: no reply from ibsim within %v", cmd, consoleTimeout)
		}
	}
}

// trimPrompts removes the "sim> " prompts ibsim prints around a reply: the
// one left over from the previous round trip and the one before our marker.
func trimPrompts(s string) string {
	for strings.HasPrefix(s, prompt) {
		s = s[len(prompt):]
	}
	for strings.HasSuffix(s, prompt) {
		s = s[:len(s)-len(prompt)]
	}
	return s
}

// consoleComplaint returns the first line of a console reply in which ibsim
// refuses a command, or "". ibsim prints its complaints like any other
// output: most start with "# " (unlike Dump's own "# Net status" and
// "#  dumped" lines), the rest are recognised by their wording.
func consoleComplaint(out string) string {
	for _, line := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(line, "# ") && !strings.HasPrefix(line, "# Net status") && !strings.HasPrefix(line, "#  dumped"),
			strings.HasSuffix(line, "unknown - skipped"),
			strings.HasPrefix(line, "bad "), strings.HasPrefix(line, "Bad "),
			strings.Contains(line, "Usage:"),
			strings.HasPrefix(line, "no route found"),
			strings.HasPrefix(line, "wait: bad"),
			strings.HasPrefix(line, "disconnect client: "):
			return line
		}
	}
	return ""
}
