package procs

import (
	"os"
	"runtime"
	"sync"
)

// A command's MADs go through one receive loop, which also runs the
// walks' and fan-outs' callbacks (rpc.Engine.Go), so Go code on a second
// CPU adds hand-offs, not speed: with two, each reply that arrived while
// the loop was parked woke a thread on the other CPU to run it (2,344
// context switches per ibnetdiscover of the 2000-node fabric, against 349
// on one CPU; 5-10% of its time), and the collector's workers took CPU
// from the other end of the exchange (the simulator, on a test host). So a command runs its Go code on one CPU, and
// takes every CPU back only for what is CPU-bound and parallel: the
// printers that format a big fabric on every CPU (formatInOrder).
//
// The exporter keeps every CPU: it serves scrapes concurrently. GOMAXPROCS,
// when set, is obeyed as it is.

var (
	procsMu  sync.Mutex
	allProcs int // the CPUs OneProc took away; 0 when it did not
)

// OneProc runs the process's Go code on one CPU, as above, unless
// GOMAXPROCS is set or the command is the exporter.
func OneProc(cmd string) {
	if os.Getenv("GOMAXPROCS") != "" || cmd == "exporter" {
		return
	}
	procsMu.Lock()
	defer procsMu.Unlock()
	if n := runtime.GOMAXPROCS(0); n > 1 {
		allProcs = n
		runtime.GOMAXPROCS(1)
	}
}

// AllCPUs gives the process back the CPUs OneProc took, until the
// function it returns is called; it returns how many CPUs Go code may now
// run on.
func AllCPUs() (cpus int, restore func()) {
	procsMu.Lock()
	n := allProcs
	procsMu.Unlock()
	if n == 0 {
		return runtime.GOMAXPROCS(0), func() {}
	}
	prev := runtime.GOMAXPROCS(n)
	return n, func() { runtime.GOMAXPROCS(prev) }
}
