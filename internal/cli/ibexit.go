package cli

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

// ibFailure is a failed step: the C tool's IBEXIT message and the cause.
type ibFailure struct {
	cmsg string // IBEXIT's text, without "<tool>: iberror: failed: "
	what string // what ibtool was doing, for its own message ("": cmsg says it)
	err  error  // what went wrong in our words; nil when cmsg says it all
	fn   string // the C function that calls IBEXIT ("main" when empty), shown with -d
	// stderr is set when the C tool writes to stderr for this failure too
	// (libibmad's ibwarn lines), so compat use may explain it there.
	stderr bool
	code   int // exit code as "ibtool <cmd>" (with cstderr, in compat use too); 0 means ExitFailure
	// cstderr is set for a tool that reports its failures without IBEXIT
	// (saquery prints a message and exits with an errno value): this text
	// goes to stderr as is and the exit code is code, in compat use and as
	// "ibtool <cmd>" alike.
	cstderr string
}

func (f *ibFailure) Error() string {
	msg := f.what
	if msg == "" {
		msg = f.cmsg
	}
	if msg == "" {
		msg = strings.TrimSuffix(f.cstderr, "\n")
	}
	if f.err == nil {
		return msg
	}
	return msg + ": " + f.err.Error()
}

func (f *ibFailure) Unwrap() error { return f.err }

// ibFail reports a command's error. Usage errors and errors that are not
// ibFailures pass through. In compat use an ibFailure prints the C tool's
// IBEXIT line on stdout and exits 255 (the explanation goes to stderr when
// the C tool writes there too, or with -v/-e/-d/--json); as "ibtool <cmd>"
// it is one line on stderr with the failure's exit code. A failure the C
// tool reports in its own words (cstderr) is those words in both uses.
func ibFail(env *Env, c *Common, tool string, err error) error {
	var f *ibFailure
	if err == nil || !errors.As(err, &f) {
		return err
	}
	return reportIBExit(env, c, tool, f, err)
}

// reportIBExit reports an ibFailure (err wraps f) as ibFail describes.
func reportIBExit(env *Env, c *Common, tool string, f *ibFailure, err error) error {
	code := f.code
	if code == 0 {
		code = ExitFailure
	}
	if f.cstderr != "" {
		fmt.Fprint(env.IO.Err, f.cstderr)
		return &ExitError{Code: code, Err: errSilent}
	}
	if !env.Compat {
		return &ExitError{Code: code, Err: err}
	}
	if !c.JSON {
		if c.Debug > 0 {
			fn := f.fn
			if fn == "" {
				fn = "main"
			}
			fmt.Fprintf(env.IO.Out, "%s: iberror: [pid %d] %s: failed: %s\n", tool, os.Getpid(), fn, f.cmsg)
		} else {
			fmt.Fprintf(env.IO.Out, "%s: iberror: failed: %s\n", tool, f.cmsg)
		}
	}
	if (f.err != nil || f.what != "") && (f.stderr || c.Verbose > 0 || c.Errors || c.Debug > 0 || c.JSON) {
		var why error = f
		if f.what == "" {
			why = f.err
		}
		fmt.Fprintf(env.IO.Err, "%s: %v\n", tool, why)
		var d rpc.Detailer
		if errors.As(f.err, &d) {
			fmt.Fprint(env.IO.Err, d.Detail(c.Verbose))
		}
	}
	return &ExitError{Code: ExitFailure, Err: errSilent}
}

// exitWith is the C tool's fprintf(stderr, msg) + exit(code), as a
// failure for the one failure path (ibFail).
func exitWith(code int, format string, args ...any) error {
	return &ibFailure{cstderr: fmt.Sprintf(format+"\n", args...), code: code}
}

// ibwarn prints libibmad's IBWARN line ("ibwarn: [pid] func: msg").
func ibwarn(env *Env, fn, format string, args ...any) {
	fmt.Fprintf(env.IO.Err, "ibwarn: [%d] %s: %s\n", os.Getpid(), fn, fmt.Sprintf(format, args...))
}

// ibWarns says whether libibmad writes to stderr for a failed MAD: it does
// for lost ones ("_do_madrpc failed"), not for a bad status (unless -e).
func ibWarns(err error) bool {
	var te *rpc.TimeoutError
	return errors.As(err, &te) || !errors.As(err, new(*rpc.StatusError))
}

// smpFailed is the C tools' IBEXIT after a failed SMP to d: cmsg in the
// C tool's words (fn its function, for -d), err ours.
func smpFailed(cmsg, fn string, d query.Dest, err error) error {
	var te *rpc.TimeoutError
	if errors.As(err, &te) && d.Kind == query.ByCombined {
		err = fmt.Errorf("%w; combined LID+DR routes need SMAs that forward them (ibsim drops them)", err)
	}
	return &ibFailure{cmsg: cmsg, fn: fn, err: err, stderr: ibWarns(err)}
}
