package exitclean

import (
	"os"
	"reflect"
	"syscall"
	"testing"
	"time"
)

func TestExitRunsCleanupsNewestFirstOnce(t *testing.T) {
	var ran []int
	exited := -1
	exitFunc = func(code int) { exited = code }
	defer func() { exitFunc = nil }()
	Add(func() { ran = append(ran, 1) })
	forget := Add(func() { ran = append(ran, 2) })
	var remove3 func()
	remove3 = Add(func() { ran = append(ran, 3); remove3() }) // may unregister itself
	forget()
	Exit(130)
	exiting.Unlock() // Exit keeps it: let the test go on
	if !reflect.DeepEqual(ran, []int{3, 1}) || exited != 130 || Pending() != 0 {
		t.Fatalf("ran %v, exit %d, pending %d", ran, exited, Pending())
	}
}

// An exit waits for a Hold: a resource is created and registered before
// the cleanups run, never in between.
func TestHoldDelaysExit(t *testing.T) {
	release := Hold()
	done := make(chan struct{})
	go func() {
		Run()
		close(done)
	}()
	select {
	case <-done:
		t.Fatal("Run did not wait for Hold")
	case <-time.After(50 * time.Millisecond):
	}
	removed := false
	Add(func() { removed = true })
	release()
	<-done
	if !removed {
		t.Fatal("the cleanup registered under Hold did not run")
	}
}

// The signals are watched from the first resource on: a SIGHUP after an
// Add runs its cleanup and exits with 128+1, as a shell reports it.
func TestAddWatchesSignals(t *testing.T) {
	exited := make(chan int, 1)
	exitFunc = func(code int) { exited <- code }
	defer func() { exitFunc = nil }()
	cleaned := make(chan struct{})
	remove := Add(func() { close(cleaned) })
	defer remove()
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	select {
	case code := <-exited:
		exiting.Unlock() // Exit keeps it: let the tests go on
		if code != 129 {
			t.Errorf("exit %d after SIGHUP, want 129", code)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no exit after SIGHUP")
	}
	select {
	case <-cleaned:
	default:
		t.Error("the cleanup did not run")
	}
}

// A daemon that takes SIGHUP gets it and goes on; SIGTERM is still not
// its (it did not Forward that), so SIGTERM still exits.
func TestForwardHangupTakesOnlySIGHUP(t *testing.T) {
	exited := make(chan int, 1)
	exitFunc = func(code int) { exited <- code }
	defer func() { exitFunc = nil }()
	hup := make(chan os.Signal, 1)
	done := ForwardHangup(hup)
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	select {
	case sig := <-hup:
		if sig != syscall.SIGHUP {
			t.Errorf("got %v", sig)
		}
	case code := <-exited:
		exiting.Unlock()
		t.Fatalf("exit %d on a SIGHUP the program takes", code)
	case <-time.After(10 * time.Second):
		t.Fatal("SIGHUP not delivered")
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case code := <-exited:
		exiting.Unlock()
		if code != 143 {
			t.Errorf("exit %d after SIGTERM, want 143", code)
		}
	case <-hup:
		t.Error("SIGTERM went to the SIGHUP handler")
	case <-time.After(10 * time.Second):
		t.Fatal("no exit after SIGTERM")
	}
	done()
}
