package cmdutil

import (
	"regexp"
	"sync"
)

// LazyRegexp is a pattern compiled the first time it is used: a
// package-level LazyRegexp{Expr: ...} is data the linker lays out, so no
// start of the program pays for it. (Compiling every command's patterns
// in package initialisation cost each run, whatever it ran, about a
// millisecond; even a closure per pattern made every start allocate.)
type LazyRegexp struct {
	Expr string
	once sync.Once
	re   *regexp.Regexp
}

// Get is the compiled pattern.
func (r *LazyRegexp) Get() *regexp.Regexp {
	r.once.Do(func() { r.re = regexp.MustCompile(r.Expr) })
	return r.re
}
