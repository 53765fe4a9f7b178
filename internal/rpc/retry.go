package rpc

import (
	"math"
	"sync/atomic"
	"time"
)

// Adaptive retries. A request gets Options.Retries resends, as in
// infiniband-diags. When they are spent, the engine looks at what it has
// seen: on a fabric that loses MADs now and then (a flaky link, a busy
// SMA) but answers most of them, giving up after a few attempts loses a
// node or a port out of a walk of thousands, although one more resend
// would have found it. So a request that ran out of attempts gets more
// when
//
//   - its destination has answered other MADs (it is alive, its MADs get
//     lost), or
//   - the engine has had enough replies to measure the loss per attempt;
//
// as many more as make losing it at the measured loss rate about one in a
// million, up to MaxRetries. On a fabric without loss nothing changes: a
// dead destination still costs Retries+1 attempts, and a command whose
// request has no resends (Retries < 0) gets none.
//
// The extra resends back off (1 ms, doubling, at most a quarter of the
// timeout) before they go: ibsim, for one, gives a MAD it drops back at
// once, and resending it at once would spin. Only that request waits, on a
// timer, while the rest of the walk goes on in the windows.

// lossTarget is the chance of losing a request that extra resends aim at.
const lossTarget = 1e-6

// minLossSample is how many replies the engine needs before it trusts its
// loss rate for a destination that never answered.
const minLossSample = 4

// lossCounts measures the loss per attempt on the requests that were
// answered in the end: a dead destination, which answers nothing, does not
// make the fabric look lossy.
type lossCounts struct {
	answered atomic.Uint64 // requests answered
	failed   atomic.Uint64 // their attempts that were not
}

func (l *lossCounts) note(attempts int) {
	l.answered.Add(1)
	l.failed.Add(uint64(attempts - 1))
}

// rate is the loss per attempt so far, and whether it rests on enough
// replies to act on for a destination that never answered.
func (l *lossCounts) rate() (p float64, trusted bool) {
	a, f := l.answered.Load(), l.failed.Load()
	if a == 0 {
		return 1, false
	}
	return float64(f) / float64(a+f), a >= minLossSample
}

// attemptsFor is the number of attempts that loses a request about once
// in 1/lossTarget at loss rate p.
func attemptsFor(p float64) int {
	if p <= 0 {
		return 1
	}
	if p >= 1 {
		return math.MaxInt32
	}
	return int(math.Ceil(math.Log(lossTarget) / math.Log(p)))
}

// maxRetries is the engine's bound on resends for a request with retries
// of its own.
func (e *Engine) maxRetries(retries int) int {
	if e.opt.MaxRetries != 0 {
		return max(e.opt.MaxRetries, retries)
	}
	return 4*(retries+1) - 1
}

// moreAttempts says whether a request to dest that has used attempt
// attempts of its retries+1 may be sent again.
func (e *Engine) moreAttempts(dest *destSlot, attempt, retries int) bool {
	if attempt <= retries {
		return true
	}
	if retries <= 0 || attempt > e.maxRetries(retries) {
		return false
	}
	p, trusted := e.loss.rate()
	e.mu.Lock()
	alive := e.answered[dest] > 0
	e.mu.Unlock()
	switch {
	case alive:
		return attempt < attemptsFor(p)+2
	case trusted:
		return attempt < attemptsFor(p)
	}
	return false
}

// backoff is how long to wait before resending after attempt: nothing
// within Retries, then 1 ms doubling up to a quarter of the timeout.
func backoff(attempt, retries int, timeout time.Duration) time.Duration {
	extra := attempt - retries // 1 for the first extra resend
	if extra < 1 {
		return 0
	}
	return min(time.Millisecond<<min(extra-1, 20), timeout/4)
}

// noteAnswer counts a reply from dest after attempts attempts.
func (e *Engine) noteAnswer(dest *destSlot, attempts int) {
	e.loss.note(attempts)
	e.mu.Lock()
	e.answered[dest]++
	e.mu.Unlock()
}
