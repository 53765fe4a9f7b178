//go:build debpkg

package main

// make deb builds ibtool as a PIE (-tags debpkg), which must name libc
// for Debian's lintian (see internal/dynlibc). The default build stays
// static: nothing of libc is loaded at any start.
import _ "github.com/ibtool/ibtool/internal/dynlibc"
