// Package dlopen is how package verbs reaches libibverbs: dlopen, dlsym and
// calls of C functions, through github.com/ebitengine/purego, so that
// building needs neither cgo nor a C compiler.
//
// Importing it costs every start of the binary: without cgo, purego links
// its own cgo runtime, which makes the executable dynamically linked to
// libc, so the kernel starts it through the dynamic loader, which maps and
// relocates libc before the Go runtime starts (about 100 more page faults
// and 1.8 MB more RSS for a program that prints one line). So only
// cmd/ibtool-verbs, which runs the verbs commands, imports it and hands it
// to verbs.UseC; ibtool itself stays statically linked and runs those
// commands through it.
package dlopen

import (
	"runtime"

	"github.com/ebitengine/purego"
)

// C opens libraries with dlopen and calls their functions. It implements
// verbs.C.
type C struct{}

// Open opens a library with every symbol resolved now and kept local.
func (C) Open(name string) (uintptr, error) {
	// dlerror's message is per OS thread, and purego asks for it in a
	// second call: keep both on one thread, or the reason comes out empty.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	return purego.Dlopen(name, purego.RTLD_NOW|purego.RTLD_LOCAL)
}

// Symbol is the address of a symbol of lib or of the libraries it needs.
func (C) Symbol(lib uintptr, name string) (uintptr, error) { return purego.Dlsym(lib, name) }

// Close closes a library Open opened.
func (C) Close(lib uintptr) { purego.Dlclose(lib) }

// Call calls the C function at fn with integer and pointer arguments and
// returns its integer result.
func (C) Call(fn uintptr, args ...uintptr) uintptr {
	r, _, _ := purego.SyscallN(fn, args...)
	return r
}
