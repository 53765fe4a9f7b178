package verbs

import (
	"encoding/binary"
	"runtime"
	"syscall"
	"unsafe"
)

// libibverbs is called through a C, which opens it with dlopen, looks its
// functions up with dlsym and calls them as plain C calls, with or without
// cgo, so building ibtool needs neither a C compiler nor rdma-core's
// headers. The structures passed are the Go mirrors in layout.go. Verbs that
// verbs.h implements inline (poll_cq, req_notify_cq, post_send, post_recv,
// and the extended query_port and query_device_ex) are called through the
// context's function tables, as the inline code does.

// C is how the binding reaches C code. Package verbs/dlopen has the one
// implementation (purego), which makes the binary that links it
// dynamically linked to libc: see UseC.
type C interface {
	// Open opens a shared library (dlopen with RTLD_NOW|RTLD_LOCAL).
	Open(name string) (lib uintptr, err error)
	// Symbol is a function's address in lib or the libraries it needs.
	Symbol(lib uintptr, name string) (uintptr, error)
	Close(lib uintptr)
	// Call calls the C function at fn and returns its integer result.
	Call(fn uintptr, args ...uintptr) uintptr
}

// clib is the C that UseC gave; nil in a binary that calls no C.
var clib C

// UseC gives the binding its way to C: the main package of the binary that
// runs the verbs commands calls it before anything else. Where it was not
// called Load fails, and CanCall says so beforehand: linking a way to C
// links the whole binary dynamically, and every start of it pays the
// dynamic loader, so ibtool itself leaves it out and runs the verbs
// commands through cmd/ibtool-verbs.
func UseC(c C) { clib = c }

// CanCall says whether this binary can call libibverbs at all (UseC was
// called), before Load tries to open it.
func CanCall() bool { return clib != nil }

// fns holds the entry points Load resolved; they are set together, only
// when every required one was found.
var fns libFns

type libFns struct {
	getDeviceList, freeDeviceList, getDeviceGUID, openDevice, closeDevice uintptr
	queryDevice, queryPort, queryGID, queryGIDEx, queryPKey               uintptr
	allocPD, deallocPD, regMR, deregMR                                    uintptr
	createCompChannel, destroyCompChannel                                 uintptr
	createCQ, destroyCQ, getCQEvent, ackCQEvents                          uintptr
	createQP, modifyQP, queryQP, destroyQP                                uintptr
	getAsyncEvent, ackAsyncEvent                                          uintptr
	errnoLocation                                                         uintptr // libc's, to read errno
}

func cLoad(name string) error {
	if clib == nil {
		return &UnavailableError{Library: name, Reason: "this binary calls no C: the verbs commands run in ibtool-verbs"}
	}
	lib, err := clib.Open(name)
	if err != nil {
		return &UnavailableError{Library: name, Reason: err.Error()}
	}
	var f libFns
	for _, s := range []struct {
		fn  *uintptr
		sym string
	}{
		{&f.getDeviceList, "ibv_get_device_list"}, {&f.freeDeviceList, "ibv_free_device_list"},
		{&f.getDeviceGUID, "ibv_get_device_guid"}, {&f.openDevice, "ibv_open_device"},
		{&f.closeDevice, "ibv_close_device"}, {&f.queryDevice, "ibv_query_device"},
		{&f.queryPort, "ibv_query_port"}, {&f.queryGID, "ibv_query_gid"}, {&f.queryPKey, "ibv_query_pkey"},
		{&f.allocPD, "ibv_alloc_pd"}, {&f.deallocPD, "ibv_dealloc_pd"},
		{&f.regMR, "ibv_reg_mr"}, {&f.deregMR, "ibv_dereg_mr"},
		{&f.createCompChannel, "ibv_create_comp_channel"}, {&f.destroyCompChannel, "ibv_destroy_comp_channel"},
		{&f.createCQ, "ibv_create_cq"}, {&f.destroyCQ, "ibv_destroy_cq"},
		{&f.getCQEvent, "ibv_get_cq_event"}, {&f.ackCQEvents, "ibv_ack_cq_events"},
		{&f.createQP, "ibv_create_qp"}, {&f.modifyQP, "ibv_modify_qp"},
		{&f.queryQP, "ibv_query_qp"}, {&f.destroyQP, "ibv_destroy_qp"},
		{&f.getAsyncEvent, "ibv_get_async_event"}, {&f.ackAsyncEvent, "ibv_ack_async_event"},
		// Found through libibverbs' dependencies (libc).
		{&f.errnoLocation, "__errno_location"},
	} {
		if *s.fn, err = clib.Symbol(lib, s.sym); err != nil || *s.fn == 0 {
			clib.Close(lib)
			return &UnavailableError{Library: name, Reason: name + ": symbol " + s.sym + " not found"}
		}
	}
	// Optional: rdma-core 31 and later.
	f.queryGIDEx, _ = clib.Symbol(lib, "_ibv_query_gid_ex")
	fns = f
	return nil
}

// call calls a C function whose errno does not matter. Pointer arguments
// are converted to uintptr in the call expression; the pragma keeps what
// they point to alive and in place for the call.
//
//go:uintptrescapes
func call(fn uintptr, args ...uintptr) uintptr { return clib.Call(fn, args...) }

// callErrno calls a C function and returns the errno it left. The thread
// stays locked from clearing errno to reading it, so both are the errno of
// the thread that ran the function.
//
//go:uintptrescapes
func callErrno(fn uintptr, args ...uintptr) (uintptr, syscall.Errno) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	errno := (*int32)(cptr(clib.Call(fns.errnoLocation)))
	*errno = 0
	r := clib.Call(fn, args...)
	return r, syscall.Errno(*errno)
}

// cptr turns an address libibverbs returned into a pointer. C memory never
// moves; the double conversion keeps go vet from flagging a uintptr to
// unsafe.Pointer conversion it cannot prove safe.
func cptr(addr uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&addr)) }

// cint is a C int result: the low 32 bits of the register.
func cint(r uintptr) int32 { return int32(uint32(r)) }

// callErr turns a verbs return code into an error: positive codes are
// errnos, negative ones mean "see errno".
func callErr(op string, rc int32, errno syscall.Errno) error {
	switch {
	case rc == 0:
		return nil
	case rc > 0:
		return errnoErr(op, syscall.Errno(rc))
	case errno != 0:
		return errnoErr(op, errno)
	}
	return errnoErr(op, syscall.EIO)
}

// nullErr is the error for a constructor that returned NULL.
func nullErr(op string, errno syscall.Errno) error {
	if errno != 0 {
		return errnoErr(op, errno)
	}
	return errnoErr(op, syscall.ENOMEM)
}

// be64, be32 and be16 convert big-endian values read as native integers
// (and back: the conversion is its own inverse).
func be64(v uint64) uint64 {
	var b [8]byte
	binary.NativeEndian.PutUint64(b[:], v)
	return binary.BigEndian.Uint64(b[:])
}

func be32(v uint32) uint32 {
	var b [4]byte
	binary.NativeEndian.PutUint32(b[:], v)
	return binary.BigEndian.Uint32(b[:])
}

func be16(v uint16) uint16 {
	var b [2]byte
	binary.NativeEndian.PutUint16(b[:], v)
	return binary.BigEndian.Uint16(b[:])
}

// cString is a NUL-terminated C char array as a Go string.
func cString(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

// contextOps is the provider's function table of the context an object
// (a CQ or QP: its first member is the context pointer) belongs to.
func contextOps(obj handle) *ibvContextOps {
	ctx := *(*uintptr)(obj)
	return &(*ibvContext)(cptr(ctx)).Ops
}

// extended is the struct verbs_context around a context, nil when the
// context is not one (verbs.h's verbs_get_ctx).
func extended(ctx handle) *verbsContext {
	if (*ibvContext)(ctx).ABICompat != verbsABIIsExtended {
		return nil
	}
	return (*verbsContext)(unsafe.Add(ctx, -int(unsafe.Offsetof(verbsContext{}.Context))))
}

// extendedOp is the provider's op at offset off in struct verbs_context, or
// 0 when the context is not extended, the provider's structure predates the
// op, or the provider leaves it unset (verbs.h's verbs_get_ctx_op). The
// structure grows at its start, so sz says which ops exist.
func extendedOp(ctx handle, off uintptr) uintptr {
	vc := extended(ctx)
	if vc == nil || vc.Size < unsafe.Sizeof(*vc)-off {
		return 0
	}
	return *(*uintptr)(unsafe.Add(unsafe.Pointer(vc), off))
}
