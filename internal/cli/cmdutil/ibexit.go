package cmdutil

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/ibtool/ibtool/internal/query"
	"github.com/ibtool/ibtool/internal/rpc"
)

// Failures the way infiniband-diags reports them. The C tools end a failed
// operation with IBEXIT: "<tool>: iberror: failed: <message>" on stdout and
// exit 255, often after libibmad warned on stderr. In compat use (run
// through the tool's symlink) ibtool prints exactly that, so scripts that
// parse the C tools' stdout keep working; as "ibtool <cmd>" a failure is
// one line on stderr in ibtool's own words.

// Failure is a failed step: the C tool's IBEXIT message and the cause.
type Failure struct {
	CMsg string // IBEXIT's text, without "<tool>: iberror: failed: "
	What string // what ibtool was doing, for its own message ("": cmsg says it)
	Err  error  // what went wrong in our words; nil when cmsg says it all
	Fn   string // the C function that calls IBEXIT ("main" when empty), shown with -d
	// Stderr is set when the C tool writes to stderr for this failure too
	// (libibmad's ibwarn lines), so compat use may explain it there.
	Stderr bool
	Code   int // exit code as "ibtool <cmd>" (with cstderr, in compat use too); 0 means ExitFailure
	// CStderr is set for a tool that reports its failures without IBEXIT
	// (saquery prints a message and exits with an errno value): this text
	// goes to stderr as is and the exit code is code, in compat use and as
	// "ibtool <cmd>" alike.
	CStderr string
}

func (f *Failure) Error() string {
	msg := f.What
	if msg == "" {
		msg = f.CMsg
	}
	if msg == "" {
		msg = strings.TrimSuffix(f.CStderr, "\n")
	}
	if f.Err == nil {
		return msg
	}
	return msg + ": " + f.Err.Error()
}

func (f *Failure) Unwrap() error { return f.Err }

// Fail reports a command's error. Usage errors and errors that are not
// ibFailures pass through. In compat use an Failure prints the C tool's
// IBEXIT line on stdout and exits 255 (the explanation goes to stderr when
// the C tool writes there too, or with -v/-e/-d/--json); as "ibtool <cmd>"
// it is one line on stderr with the failure's exit code. A failure the C
// tool reports in its own words (cstderr) is those words in both uses.
func Fail(env *Env, c *Common, tool string, err error) error {
	var f *Failure
	if err == nil || !errors.As(err, &f) {
		return err
	}
	return ReportIBExit(env, c, tool, f, err)
}

// ReportIBExit reports an Failure (err wraps f) as Fail describes.
func ReportIBExit(env *Env, c *Common, tool string, f *Failure, err error) error {
	code := f.Code
	if code == 0 {
		code = ExitFailure
	}
	if f.CStderr != "" {
		fmt.Fprint(env.IO.Err, f.CStderr)
		return &ExitError{Code: code, Err: ErrSilent}
	}
	if !env.Compat {
		return &ExitError{Code: code, Err: err}
	}
	if !c.JSON {
		if c.Debug > 0 {
			fn := f.Fn
			if fn == "" {
				fn = "main"
			}
			fmt.Fprintf(env.IO.Out, "%s: iberror: [pid %d] %s: failed: %s\n", tool, os.Getpid(), fn, f.CMsg)
		} else {
			fmt.Fprintf(env.IO.Out, "%s: iberror: failed: %s\n", tool, f.CMsg)
		}
	}
	if (f.Err != nil || f.What != "") && (f.Stderr || c.Verbose > 0 || c.Errors || c.Debug > 0 || c.JSON) {
		var why error = f
		if f.What == "" {
			why = f.Err
		}
		fmt.Fprintf(env.IO.Err, "%s: %v\n", tool, why)
		var d rpc.Detailer
		if errors.As(f.Err, &d) {
			fmt.Fprint(env.IO.Err, d.Detail(c.Verbose))
		}
	}
	return &ExitError{Code: ExitFailure, Err: ErrSilent}
}

// ExitWith is the C tool's fprintf(stderr, msg) + exit(code), as a
// failure for the one failure path (Fail).
func ExitWith(code int, format string, args ...any) error {
	return &Failure{CStderr: fmt.Sprintf(format+"\n", args...), Code: code}
}

// IBWarn prints libibmad's IBWARN line ("ibwarn: [pid] func: msg").
func IBWarn(env *Env, fn, format string, args ...any) {
	fmt.Fprintf(env.IO.Err, "ibwarn: [%d] %s: %s\n", os.Getpid(), fn, fmt.Sprintf(format, args...))
}

// IBWarns says whether libibmad writes to stderr for a failed MAD: it does
// for lost ones ("_do_madrpc failed"), not for a bad status (unless -e).
func IBWarns(err error) bool {
	var te *rpc.TimeoutError
	return errors.As(err, &te) || !errors.As(err, new(*rpc.StatusError))
}

// SMPFailed is the C tools' IBEXIT after a failed SMP to d: cmsg in the
// C tool's words (fn its function, for -d), err ours.
func SMPFailed(cmsg, fn string, d query.Dest, err error) error {
	var te *rpc.TimeoutError
	if errors.As(err, &te) && d.Kind == query.ByCombined {
		err = fmt.Errorf("%w; combined LID+DR routes need SMAs that forward them (ibsim drops them)", err)
	}
	return &Failure{CMsg: cmsg, Fn: fn, Err: err, Stderr: IBWarns(err)}
}
