package query

import (
	"bytes"
	"context"
	"sync"
	"time"

	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/rpc"
)

// Job is one Get of a fan-out: an attribute modifier at a destination,
// with the request's attribute data when the class wants some (PerfMgt's
// PortSelect).
type Job struct {
	Dest Dest
	Mod  uint32
	In   mad.Struct
	// Class is the management class; 0 chooses as Get does.
	Class uint8
	// Timeout is the job's timeout per attempt; 0 for the engine's.
	Timeout time.Duration
}

// Result is what one Job got: the decoded attribute, or the job's error.
type Result[T any] struct {
	Value T
	Err   error
}

// Struct is a pointer to a generated attribute type.
type Struct[T any] interface {
	*T
	mad.Struct
}

// FanOut gets attribute T for every job at once, as many in flight as the
// engine's windows allow (globally and per destination, so no agent is
// flooded), and returns the results in the jobs' order. Each job has its
// own result or error: a lost or refused MAD never stops the others. It
// returns when every job has its answer or ctx has ended.
func FanOut[T any, P Struct[T]](ctx context.Context, c *Client, jobs []Job) []Result[T] {
	results := make([]Result[T], len(jobs))
	errs := c.fanOut(ctx, jobs, func(i int) mad.Struct { return P(&results[i].Value) })
	for i, err := range errs {
		results[i].Err = err
	}
	return results
}

// fanOut runs jobs through the engine, decoding job i's reply into
// out(i), and returns each job's error in the jobs' order.
//
// Only a few windows' worth of jobs are handed to the engine at once, and
// each answer hands over the next, from the engine's receive loop. Handing
// over all of a fabric's jobs first kept the engine's receive loop from
// running until the last was queued (a command runs its Go code on one
// CPU): ibsim answered the first window and then sat idle, 6-10 ms per
// 2,000 jobs, and every queued job held its request and MAD meanwhile.
// Jobs go out one destination at a time in turn (issueOrder), so that the
// few handed over are not stuck behind one agent's window.
func (c *Client) fanOut(ctx context.Context, jobs []Job, out func(int) mad.Struct) []error {
	f := &fanOutRun{ctx: ctx, c: c, jobs: jobs, out: out, errs: make([]error, len(jobs)), order: issueOrder(jobs)}
	f.wg.Add(len(jobs))
	f.more(fanOutAhead*c.eng.MaxWindow(), nil)
	f.wg.Wait()
	return f.errs
}

// fanOutAhead is how many of the engine's largest windows of jobs a
// fan-out keeps handed over: enough to fill the global window while some
// wait for a busy destination.
const fanOutAhead = 2

// fanOutRun is one fan-out in progress.
type fanOutRun struct {
	ctx   context.Context
	c     *Client
	jobs  []Job
	out   func(int) mad.Struct
	errs  []error
	order []int32 // the jobs in the order they are handed over
	wg    sync.WaitGroup

	mu      sync.Mutex
	next    int  // in order
	owed    int  // jobs to hand over
	handing bool // a goroutine is in more's loop
	// spare are requests of answered jobs, for the next jobs to reuse
	// with their MADs: only a few windows' worth are ever made.
	spare []*rpc.Request
}

// more hands n more jobs to the engine, and takes back spare, a request
// no send reads any more (nil for none). A job's answer can come at
// once, from inside Go (a closed engine, an ended ctx), and calls more
// again: that call only adds to what the loop already running owes, so
// the stack does not grow with the jobs.
func (f *fanOutRun) more(n int, spare *rpc.Request) {
	f.mu.Lock()
	f.owed += n
	if spare != nil {
		f.spare = append(f.spare, spare)
	}
	if f.handing {
		f.mu.Unlock()
		return
	}
	f.handing = true
	for f.owed > 0 && f.next < len(f.order) {
		f.owed--
		i := int(f.order[f.next])
		f.next++
		var req *rpc.Request
		if k := len(f.spare); k > 0 {
			req, f.spare = f.spare[k-1], f.spare[:k-1]
		}
		f.mu.Unlock()
		f.send(i, req)
		f.mu.Lock()
	}
	f.handing = false
	f.mu.Unlock()
}

// send hands job i to the engine, in req if it is not nil; its answer
// asks for the next job.
func (f *fanOutRun) send(i int, req *rpc.Request) {
	req, err := f.c.jobRequest(req, &f.jobs[i], f.out(i))
	if err != nil {
		f.errs[i] = err
		f.wg.Done()
		f.more(1, nil)
		return
	}
	f.c.eng.Go(f.ctx, req, func(reply *rpc.Reply, err error) {
		err = decodeReply(req, reply, err, f.out(i))
		f.errs[i] = err
		// A status error keeps the request's MAD; while one send
		// only went out, no resend reads it now (rpc.Reply.Sends).
		var spare *rpc.Request
		if err == nil && reply.Sends == 1 {
			spare = req
		}
		f.more(1, spare)
		f.wg.Done()
	})
}

// issueOrder is the order in which a fan-out hands over jobs: the first
// job of each run of jobs to one destination, then the second of each,
// and so on. Fan-outs list a node's ports together, and the engine lets
// only a few requests at a time reach one destination.
func issueOrder(jobs []Job) []int32 {
	type run struct{ start, end int32 }
	var runs []run
	for i := range jobs {
		if i > 0 && sameDest(&jobs[i-1].Dest, &jobs[i].Dest) {
			runs[len(runs)-1].end++
			continue
		}
		runs = append(runs, run{int32(i), int32(i) + 1})
	}
	order := make([]int32, 0, len(jobs))
	for len(runs) > 0 {
		left := runs[:0]
		for _, r := range runs {
			order = append(order, r.start)
			if r.start++; r.start < r.end {
				left = append(left, r)
			}
		}
		runs = left
	}
	return order
}

// sameDest tells whether a and b reach the same agent.
func sameDest(a, b *Dest) bool {
	return a.Kind == b.Kind && a.LID == b.LID && a.GMP.LID == b.GMP.LID && bytes.Equal(a.DRPath, b.DRPath)
}

// jobRequest is the Get of job j, whose reply out decodes: in req, which
// an answered job no longer needs, or a new request if req is nil.
func (c *Client) jobRequest(req *rpc.Request, j *Job, out mad.Struct) (*rpc.Request, error) {
	class := j.Class
	if class == 0 {
		var err error
		if class, err = ClassOf(out.Desc(), j.Dest); err != nil {
			return nil, err
		}
	}
	if req == nil {
		req = &rpc.Request{MAD: make(mad.Header, mad.Size)}
	} else {
		clear(req.MAD)
		*req = rpc.Request{MAD: req.MAD}
	}
	attr := out.Desc().AttrID
	if err := c.initRequest(req, j.Dest, class, mad.MethodGet, attr, j.Mod); err != nil {
		return nil, err
	}
	if j.In != nil {
		// Straight into the MAD: a fan-out's requests are many.
		data := req.MAD[requestDataOffset(class, attr):]
		if len(data) >= j.In.Desc().Size {
			if err := j.In.Marshal(data); err != nil {
				return nil, err
			}
		} else {
			copy(data, mad.Encode(j.In))
		}
	}
	req.Timeout = j.Timeout
	// decodeReply keeps nothing of the reply but a copy: the transport
	// may reuse its memory (a fan-out over a fabric's ports would
	// otherwise allocate a fresh packet per port).
	req.BorrowReply = true
	return req, nil
}

// decodeReply decodes a job's reply into out; the reply is borrowed
// (jobRequest), so an error keeps a copy of its MAD.
func decodeReply(req *rpc.Request, reply *rpc.Reply, err error, out mad.Struct) error {
	if err != nil {
		return err
	}
	if status(reply.MAD) != 0 {
		return &rpc.StatusError{Addr: req.Addr, Req: req.MAD, Reply: mad.Header(bytes.Clone(reply.MAD))}
	}
	return out.Unmarshal(attrData(reply.MAD))
}
