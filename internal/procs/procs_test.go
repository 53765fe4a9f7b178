package procs

import (
	"runtime"
	"testing"
)

// onTwoCPUs runs the test with Go code on two CPUs and GOMAXPROCS set to
// env, and puts back what OneProc and the test changed.
func onTwoCPUs(t *testing.T, env string) {
	t.Setenv("GOMAXPROCS", env)
	before := runtime.GOMAXPROCS(2)
	t.Cleanup(func() {
		allProcs = 0
		runtime.GOMAXPROCS(before)
	})
}

// A command run as the process goes on one CPU; formatInOrder's AllCPUs
// gives the CPUs back while it formats, and the exporter keeps them.
func TestOneProcAndAllCPUs(t *testing.T) {
	onTwoCPUs(t, "")
	OneProc("exporter")
	if got := runtime.GOMAXPROCS(0); got != 2 {
		t.Fatalf("the exporter runs on %d CPUs, want 2", got)
	}
	OneProc("ibnetdiscover")
	if got := runtime.GOMAXPROCS(0); got != 1 {
		t.Fatalf("ibnetdiscover runs on %d CPUs, want 1", got)
	}
	cpus, restore := AllCPUs()
	if got := runtime.GOMAXPROCS(0); cpus != 2 || got != 2 {
		t.Fatalf("allCPUs: %d CPUs, GOMAXPROCS %d, want 2", cpus, got)
	}
	restore()
	if got := runtime.GOMAXPROCS(0); got != 1 {
		t.Fatalf("after allCPUs: %d CPUs, want 1", got)
	}
}

// GOMAXPROCS set by the user is left as it is.
func TestOneProcObeysGOMAXPROCS(t *testing.T) {
	onTwoCPUs(t, "2")
	OneProc("ibnetdiscover")
	if got := runtime.GOMAXPROCS(0); got != 2 {
		t.Fatalf("with GOMAXPROCS=2 ibnetdiscover runs on %d CPUs", got)
	}
	cpus, restore := AllCPUs()
	defer restore()
	if cpus != 2 {
		t.Fatalf("allCPUs gives %d CPUs, want 2", cpus)
	}
}
