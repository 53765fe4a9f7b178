package cli

import (
	"regexp"
	"sync"
)

// lazyRegexp compiles expr the first time it is used. Compiling every
// command's patterns in package initialisation cost each run, whatever
// it ran, about a millisecond.
func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}
