package rpc

import (
	"testing"
	"time"
)

// Attempts of two timeout lengths come out in deadline order, stale ones
// (answered or resent) skipped.
func TestDeadlinesInOrderAcrossTimeouts(t *testing.T) {
	var ds deadlines
	t0 := time.Unix(1000, 0)
	due := map[*call]time.Time{}
	add := func(sent, timeout time.Duration) *call {
		c := &call{attempt: 1}
		due[c] = t0.Add(sent + timeout)
		ds.push(deadline{at: due[c], call: c, attempt: 1}, timeout)
		return c
	}
	var answered, resent *call
	for i := range 100 {
		c := add(time.Duration(i)*time.Millisecond, time.Second) // due at 1000..1099 ms
		if i%10 == 0 {
			c = add(time.Duration(i)*time.Millisecond, 50*time.Millisecond) // due at 50..140 ms
		}
		switch i {
		case 0:
			answered = c
		case 10:
			resent = c
		}
	}
	answered.finished = true // the 50 ms one sent at 0
	resent.attempt = 2       // the 50 ms one sent at 10: its first attempt is stale
	if at, ok := ds.next(); !ok || !at.Equal(t0.Add(70*time.Millisecond)) {
		t.Fatalf("next = %v %v, want 70 ms (the 50 ms timeout sent at 20)", at.Sub(t0), ok)
	}
	if _, ok := ds.popDue(t0.Add(69 * time.Millisecond)); ok {
		t.Fatal("popDue returned an attempt before its deadline")
	}
	var last time.Time
	popped := 0
	for {
		d, ok := ds.popDue(t0.Add(time.Hour))
		if !ok {
			break
		}
		c := d.call
		if c == answered || c == resent {
			t.Fatal("popped a stale attempt")
		}
		if due[c].Before(last) {
			t.Fatalf("%v came after %v", due[c].Sub(t0), last.Sub(t0))
		}
		last = due[c]
		popped++
	}
	if popped != len(due)-2 {
		t.Fatalf("popped %d, want %d", popped, len(due)-2)
	}
	if len(ds.queues) != 2 {
		t.Fatalf("%d queues, want one per timeout length", len(ds.queues))
	}
}
