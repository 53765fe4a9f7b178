package exitclean

import (
	"reflect"
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
