// Package dynlibc, imported for its effect alone (import _), makes a Go
// binary built without cgo name the C library as a needed shared object
// (an ELF DT_NEEDED entry for libc.so.6).
//
// Why: make deb builds position independent executables, which the
// dynamic loader relocates, so the Go linker gives them an interpreter
// (ld.so) and a dynamic section. Without cgo it names no library in that
// section, and such a file looks like a broken shared library to Debian's
// lintian (shared-library-lacks-prerequisites), while a non-PIE static
// build is an error there (statically-linked-binary). ibtool names libc
// already (purego, which loads libibverbs, does); a binary that does not
// load any C library, as the exporter, imports this package. The package
// depends on libc6 anyway, and the loader maps libc once.
package dynlibc

//go:cgo_import_dynamic _ _ "libc.so.6"
