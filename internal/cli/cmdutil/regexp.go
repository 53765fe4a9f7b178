package cmdutil

import (
	"regexp"
	"sync"
)

// LazyRegexp compiles expr the first time it is used. Compiling every
// command's patterns in package initialisation cost each run, whatever
// it ran, about a millisecond.
func LazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}
