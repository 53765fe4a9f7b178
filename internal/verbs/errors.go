package verbs

import (
	"errors"
	"fmt"
	"syscall"
)

// ErrUnavailable is what every call reports when libibverbs cannot be loaded.
// The concrete error is an *UnavailableError that says why.
var ErrUnavailable = errors.New("libibverbs is not available")

// ErrClosed is returned by methods of an object that was closed.
var ErrClosed = errors.New("verbs object is closed")

// UnavailableError says why libibverbs could not be loaded.
type UnavailableError struct {
	Library string // the name handed to dlopen
	Reason  string // dlerror's text, or why the build has no verbs
}

func (e *UnavailableError) Error() string {
	return fmt.Sprintf("libibverbs is not available (%s); install rdma-core's libibverbs1 and ibverbs-providers", e.Reason)
}

// Is makes errors.Is(err, ErrUnavailable) true.
func (e *UnavailableError) Is(target error) bool { return target == ErrUnavailable }

// Error is a failed verbs call: the verb and the errno it reported.
type Error struct {
	Op    string // the libibverbs function, e.g. "ibv_modify_qp"
	Errno syscall.Errno
}

func (e *Error) Error() string {
	if e.Errno == 0 {
		return e.Op + " failed"
	}
	return fmt.Sprintf("%s: %v", e.Op, e.Errno)
}

func (e *Error) Unwrap() error { return e.Errno }

// errnoErr builds an *Error; a zero errno still gives an error.
func errnoErr(op string, errno syscall.Errno) error {
	return &Error{Op: op, Errno: errno}
}

// PostError is a work request list the provider refused in ibv_post_send or
// ibv_post_recv. Requests before Index were posted; Index and those after it
// were not.
type PostError struct {
	Op    string // "ibv_post_send" or "ibv_post_recv"
	Index int    // the first request not posted, -1 if the provider did not say
	WRID  uint64 // its WRID
	Errno syscall.Errno
}

func (e *PostError) Error() string {
	if e.Index < 0 {
		return fmt.Sprintf("%s: %v", e.Op, e.Errno)
	}
	return fmt.Sprintf("%s: work request %d (wr_id %d) refused: %v", e.Op, e.Index, e.WRID, e.Errno)
}

func (e *PostError) Unwrap() error { return e.Errno }

// WCError is a work completion whose status is not WCSuccess.
type WCError struct {
	WC WorkCompletion
}

func (e *WCError) Error() string {
	return fmt.Sprintf("work request %d on QP 0x%x completed with %v (status %d, vendor error 0x%x)",
		e.WC.ID, e.WC.QPNum, e.WC.Status, int(e.WC.Status), e.WC.VendorErr)
}

// Err returns a *WCError when the completion failed, nil otherwise.
func (wc *WorkCompletion) Err() error {
	if wc.Status == WCSuccess {
		return nil
	}
	return &WCError{WC: *wc}
}

// AsyncError is an asynchronous error event (CQ error, QP fatal, request or
// access error, path migration failure, SRQ error, port error, device
// fatal).
type AsyncError struct {
	Event AsyncEvent
}

func (e *AsyncError) Error() string {
	switch {
	case e.Event.QPNum != 0 || e.Event.QP != nil:
		return fmt.Sprintf("asynchronous %v on QP 0x%x", e.Event.Type, e.Event.QPNum)
	case e.Event.Port != 0:
		return fmt.Sprintf("asynchronous %v on port %d", e.Event.Type, e.Event.Port)
	}
	return fmt.Sprintf("asynchronous %v", e.Event.Type)
}

// ErrNoDevice is wrapped by Open when no device has the name asked for (or
// there is no device at all).
var ErrNoDevice = errors.New("no such RDMA device")
