package cmdutil

import (
	"errors"
	"fmt"
)

// Exit codes. They follow infiniband-diags so scripts written for the C tools
// keep working: 2 for usage errors, 255 (the C tools' exit(-1) from IBEXIT)
// for a failed operation. docs/exit-codes.md documents them.
const (
	ExitOK      = 0
	ExitUsage   = 2
	ExitFailure = 255
)

// ExitError carries the exit code a command wants with the error it reports.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string { return e.Err.Error() }
func (e *ExitError) Unwrap() error { return e.Err }

// UsageErrorf reports bad command-line input (exit 2).
func UsageErrorf(format string, args ...any) error {
	return &ExitError{Code: ExitUsage, Err: fmt.Errorf(format, args...)}
}

// ExitCodeOf maps an error returned by a command to the process exit code.
func ExitCodeOf(err error) int {
	if err == nil {
		return ExitOK
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		return ee.Code
	}
	return ExitFailure
}

// ExitIncomplete is the exit status of a fabric-wide command whose walk
// could not read everything (docs/exit-codes.md).
const ExitIncomplete = 3

// ErrSilent marks an error whose message has already been printed.
var ErrSilent = errors.New("already reported")

// ErrVersionShown ends a command after -V printed its version.
var ErrVersionShown = errors.New("version shown")
