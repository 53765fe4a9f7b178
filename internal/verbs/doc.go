// Package verbs is a Go binding to libibverbs (rdma-core's verbs library)
// that loads the library at run time with dlopen, so a binary built with it
// still starts on a host without rdma-core: only the calls that need verbs
// fail, with an *UnavailableError (errors.Is(err, ErrUnavailable)).
//
// The binding covers what an RDMA program needs for reliable-connected
// traffic: the device list, device contexts (Open/Close), device, port and
// GID queries (with the GID type), protection domains, memory regions over
// memory the Go garbage collector never moves (AllocMemory), completion
// queues with completion channels, RC/UC/UD queue pairs with state changes
// (ToInit/ToRTR/ToRTS, GRH for RoCE), posting send and receive work
// requests, polling completions and asynchronous events.
//
// Errors are typed: *Error for a failed verbs call (with its errno),
// *PostError for a work request the provider refused, *WCError for a
// completion with a failure status and *AsyncError for an asynchronous error
// event. Every object has a Close method that releases it at once; closing a
// Context closes whatever is still open under it. Objects may be used from
// several goroutines: each serialises only what libibverbs itself does not
// make safe (its own scratch buffers and Close).
//
// The library name is libibverbs.so.1; the environment variable
// IBTOOL_LIBIBVERBS overrides it (a path or another soname), which tests use
// to simulate a host without rdma-core.
//
// Building needs neither cgo nor libibverbs' headers: the library is
// opened with dlopen and called through github.com/ebitengine/purego
// (package verbs/dlopen, which the binary's main hands to UseC), with the
// structures mirrored in Go (layout.go; layout_test.go checks them against
// the real verbs.h wherever the header is installed). So CGO_ENABLED=0
// builds, cross builds included, have the full binding. Only a binary
// that calls UseC can call libibverbs: that links it dynamically to libc
// (see UseC), so ibtool leaves it to cmd/ibtool-verbs.
package verbs
