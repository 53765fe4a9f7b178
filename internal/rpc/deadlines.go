package rpc

import "time"

// deadline is when one attempt of a call times out.
type deadline struct {
	at      time.Time
	call    *call
	attempt int
}

// stale says the attempt is over: answered, or resent since.
func (d deadline) stale() bool { return d.call.finished || d.call.attempt != d.attempt }

// deadlines holds the attempts in flight by when they time out. Attempts
// with the same timeout time out in the order they were sent, so one FIFO
// per timeout length keeps them sorted; a walk has one or two lengths.
// (A heap would box every entry on push and pop.)
type deadlines struct {
	queues []*deadlineQueue
}

type deadlineQueue struct {
	timeout time.Duration
	items   []deadline
	head    int
}

// push adds an attempt that times out after timeout.
func (ds *deadlines) push(d deadline, timeout time.Duration) {
	var q *deadlineQueue
	for _, x := range ds.queues {
		if x.timeout == timeout {
			q = x
			break
		}
	}
	if q == nil {
		q = &deadlineQueue{timeout: timeout}
		ds.queues = append(ds.queues, q)
	}
	if q.head > 0 && q.head >= len(q.items)/2 {
		// Reuse the room the popped half leaves.
		n := copy(q.items, q.items[q.head:])
		clear(q.items[n:])
		q.items, q.head = q.items[:n], 0
	}
	q.items = append(q.items, d)
}

// first is the queue whose live head times out first, dropping stale
// heads on the way; nil when nothing is in flight.
func (ds *deadlines) first() *deadlineQueue {
	var first *deadlineQueue
	for _, q := range ds.queues {
		for q.head < len(q.items) && q.items[q.head].stale() {
			q.items[q.head] = deadline{}
			q.head++
		}
		if q.head < len(q.items) && (first == nil || q.items[q.head].at.Before(first.items[first.head].at)) {
			first = q
		}
	}
	return first
}

// next is the earliest live deadline; ok is false when there is none.
func (ds *deadlines) next() (at time.Time, ok bool) {
	q := ds.first()
	if q == nil {
		return time.Time{}, false
	}
	return q.items[q.head].at, true
}

// popDue removes and returns the earliest live attempt if it is due by
// now.
func (ds *deadlines) popDue(now time.Time) (deadline, bool) {
	q := ds.first()
	if q == nil || q.items[q.head].at.After(now) {
		return deadline{}, false
	}
	d := q.items[q.head]
	q.items[q.head] = deadline{}
	q.head++
	return d, true
}
