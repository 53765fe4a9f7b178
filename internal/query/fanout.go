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
	var wg sync.WaitGroup
	for i := range jobs {
		r := &results[i]
		req, err := c.jobRequest(&jobs[i], P(&r.Value))
		if err != nil {
			r.Err = err
			continue
		}
		wg.Add(1)
		c.eng.Go(ctx, req, func(reply *rpc.Reply, err error) {
			defer wg.Done()
			r.Err = decodeReply(req, reply, err, P(&r.Value))
		})
	}
	wg.Wait()
	return results
}

func (c *Client) jobRequest(j *Job, out mad.Struct) (*rpc.Request, error) {
	var req *rpc.Request
	var err error
	if j.Class == 0 {
		req, err = c.getRequest(j.Dest, j.Mod, j.In, out)
	} else {
		req, err = c.Request(j.Dest, j.Class, mad.MethodGet, out.Desc().AttrID, j.Mod, encode(j.In))
	}
	if req != nil {
		req.Timeout = j.Timeout
		// decodeReply keeps nothing of the reply but a copy: the
		// transport may reuse its memory (a fan-out over a fabric's
		// ports would otherwise allocate a fresh packet per port).
		req.BorrowReply = true
	}
	return req, err
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
