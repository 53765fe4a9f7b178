// Package exitclean runs the process's cleanups (simulator ports to
// disconnect, temporary files to remove) on every way out: a normal exit,
// an error, a panic in the main goroutine, or SIGINT, SIGTERM or SIGHUP.
//
// ibsim never reclaims the slot of a client that died without DISCONNECT
// (it has ten), and a cache write promises to leave no temporary file: so
// the signal handler must not simply end the process. One goroutine
// receives the signals and decides, so that a signal is either the
// program's (see Forward) or ends the process, never both.
package exitclean

import (
	"os"
	"os/signal"
	"slices"
	"sync"
	"syscall"
)

var (
	// exiting is held for reading by Hold and for writing, to the end,
	// by Exit: a resource is created and registered entirely before the
	// cleanups run, or not at all.
	exiting  sync.RWMutex
	mu       sync.Mutex        // guards the registry and owners
	cleanups map[uint64]func() // made by the first Add: most runs need none
	nextID   uint64
	owners   map[chan<- os.Signal]struct{} // made by the first Forward
	// hangupOwners take SIGHUP (made by the first ForwardHangup).
	hangupOwners map[chan<- os.Signal]struct{}
	sigOnce      sync.Once
	exitFunc     = os.Exit // replaced in tests
)

// Add registers fn to run once at exit, and returns a func that
// unregisters it (call it when the resource is gone; it may be called
// from fn itself). Create the resource and call Add inside Hold, so that
// an exit cannot fall between the two. Add installs the signal handling
// too, if Hold did not.
func Add(fn func()) (remove func()) {
	Install()
	mu.Lock()
	defer mu.Unlock()
	nextID++
	id := nextID
	if cleanups == nil {
		cleanups = map[uint64]func(){}
	}
	cleanups[id] = fn
	return func() {
		mu.Lock()
		defer mu.Unlock()
		delete(cleanups, id)
	}
}

// Hold delays any exit until release is called. Keep it short: it covers
// creating one resource and registering its cleanup. Once the process has
// started to exit, Hold blocks until it has. It installs the signal
// handling first (Install), so a signal that comes once the resource
// exists cleans it up.
func Hold() (release func()) {
	Install()
	exiting.RLock()
	return exiting.RUnlock
}

// Exit runs every registered cleanup, newest first, and ends the process
// with code.
func Exit(code int) {
	exiting.Lock()
	runAll()
	exitFunc(code)
}

// Run runs and forgets every registered cleanup without exiting (tests).
func Run() {
	exiting.Lock()
	defer exiting.Unlock()
	runAll()
}

func runAll() {
	mu.Lock()
	ids := make([]uint64, 0, len(cleanups))
	for id := range cleanups {
		ids = append(ids, id)
	}
	mu.Unlock()
	slices.Sort(ids)
	for i := len(ids) - 1; i >= 0; i-- {
		mu.Lock()
		fn, ok := cleanups[ids[i]]
		delete(cleanups, ids[i])
		mu.Unlock()
		if ok {
			fn()
		}
	}
}

// Pending reports how many cleanups are registered (for tests).
func Pending() int {
	mu.Lock()
	defer mu.Unlock()
	return len(cleanups)
}

// Install starts watching SIGINT, SIGTERM and SIGHUP: unless the program
// takes the signal (Forward), it runs the cleanups and exits with
// 128+signal, as a shell reports a process killed by it. Hold, Add and
// Forward call it, so it is in place before anything needs cleaning, and
// a run that acquires nothing (--help, a decoder) pays none of it: until
// then a signal ends the process as it would any other. Calling it again
// does nothing.
func Install() {
	sigOnce.Do(func() {
		ch := make(chan os.Signal, 1)
		signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
		go func() {
			for sig := range ch {
				if forward(sig) {
					continue
				}
				Exit(128 + int(sig.(syscall.Signal)))
			}
		}()
	})
}

// Forward delivers SIGINT and SIGTERM to ch instead of ending the process
// (ibping prints its statistics and returns), until the returned func is
// called. SIGHUP still ends the process.
func Forward(ch chan<- os.Signal) (done func()) { return take(&owners, ch) }

// ForwardHangup delivers SIGHUP to ch instead of ending the process (a
// daemon's "reload"), until the returned func is called.
func ForwardHangup(ch chan<- os.Signal) (done func()) { return take(&hangupOwners, ch) }

func take(set *map[chan<- os.Signal]struct{}, ch chan<- os.Signal) (done func()) {
	Install()
	mu.Lock()
	if *set == nil {
		*set = map[chan<- os.Signal]struct{}{}
	}
	(*set)[ch] = struct{}{}
	mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			mu.Lock()
			delete(*set, ch)
			mu.Unlock()
		})
	}
}

// forward hands sig to the program's handlers of it, if it has any.
func forward(sig os.Signal) bool {
	mu.Lock()
	defer mu.Unlock()
	set := owners
	if sig == syscall.SIGHUP {
		set = hangupOwners
	}
	for ch := range set {
		select {
		case ch <- sig:
		default: // it has one pending already
		}
	}
	return len(set) > 0
}
