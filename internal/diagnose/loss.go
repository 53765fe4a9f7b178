package diagnose

import (
	"fmt"
	"sort"
	"sync"

	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/rpc"
	"github.com/ibtool/ibtool/internal/umad"
)

// LossRecorder counts, per destination, the MAD attempts of a sweep that
// got no reply: its Trace is the engine's trace hook (rpc.Options.Trace).
// The engine resends what is lost, so a flaky link costs time and shows
// nowhere else; counted per destination it points at the link.
type LossRecorder struct {
	mu    sync.Mutex
	dests map[string]*DestLoss
}

// NewLossRecorder returns an empty recorder.
func NewLossRecorder() *LossRecorder { return &LossRecorder{dests: map[string]*DestLoss{}} }

// Trace records one engine event.
func (l *LossRecorder) Trace(ev rpc.Event) {
	if ev.Kind != rpc.EventSend && ev.Kind != rpc.EventTimeout && ev.Kind != rpc.EventRecv {
		return
	}
	if ev.Kind == rpc.EventSend && ev.MAD.IsResponse() {
		return // an answer of ours (the engine serves nothing in a sweep)
	}
	key := destKey(ev.Addr, ev.MAD)
	l.mu.Lock()
	defer l.mu.Unlock()
	d := l.dests[key]
	if d == nil {
		d = &DestLoss{Dest: key}
		l.dests[key] = d
	}
	switch ev.Kind {
	case rpc.EventSend:
		d.Attempts++
	case rpc.EventTimeout:
		d.NoReply++
	case rpc.EventRecv:
		d.Replies++
	}
}

// destKey names a MAD's destination as the walk's errors do: a directed
// route by its path (a reply carries the request's), else the LID. A
// reply's address is where it came from, the request's LID.
func destKey(a umad.Address, h mad.Header) string {
	if h.Class() == mad.ClassSubnDR {
		return "DR path " + mad.FormatDRPath(h.InitialPath())
	}
	return fmt.Sprintf("LID %d", a.LID)
}

// Losses are the destinations that lost at least one attempt, ordered by
// name.
func (l *LossRecorder) Losses() []DestLoss {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []DestLoss
	for _, d := range l.dests {
		if d.NoReply > 0 {
			out = append(out, *d)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Dest < out[j].Dest })
	return out
}
