package query

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/rpc"
	"github.com/ibtool/ibtool/internal/umad"
	"github.com/ibtool/ibtool/internal/umad/umadtest"
)

func TestIssueOrderTakesTheDestinationsInTurn(t *testing.T) {
	a, b, c := pmaDest(1), pmaDest(2), LID(3)
	jobs := []Job{{Dest: a}, {Dest: a}, {Dest: a}, {Dest: b}, {Dest: c}, {Dest: c}, {Dest: a}}
	got := issueOrder(jobs)
	// Runs: a (0-2), b (3), c (4-5), a again (6).
	want := []int32{0, 3, 4, 6, 1, 5, 2}
	if !slices.Equal(got, want) {
		t.Errorf("issueOrder = %v, want %v", got, want)
	}
	if got := issueOrder(nil); len(got) != 0 {
		t.Errorf("issueOrder(nil) = %v", got)
	}
	dr1, dr2 := DR([]byte{0, 1}), DR([]byte{0, 2})
	if got := issueOrder([]Job{{Dest: dr1}, {Dest: dr1}, {Dest: dr2}}); !slices.Equal(got, []int32{0, 2, 1}) {
		t.Errorf("issueOrder over DR paths = %v, want [0 2 1]", got)
	}
}

// pmaFanOut is a fabric of one switch with ports PMAs, each holding its
// ports' PortCounters, answered after delay, and a client whose engine
// keeps window requests in flight, 2 per destination.
func pmaFanOut(t *testing.T, pmas, ports, window int, delay time.Duration) (*Client, *umadtest.Port, []Job) {
	t.Helper()
	byLID := map[uint16]*umadtest.PMA{}
	var jobs []Job
	for i := range pmas {
		lid := uint16(10 + i)
		pma := umadtest.NewPMA()
		for p := 1; p <= ports; p++ {
			pma.Set(uint32(p), &mad.PortCounters{PortSelect: uint8(p), SymbolErrorCounter: lid})
			jobs = append(jobs, Job{Dest: pmaDest(lid), In: PortSelect(mad.LookupStruct("PortCounters"), p)})
		}
		byLID[lid] = pma
	}
	port := umadtest.NewPort(func(req *umad.Packet) []*umad.Packet {
		if pma := byLID[req.Addr.LID]; pma != nil {
			return pma.Answer(req)
		}
		return nil
	}, umadtest.Delay(delay))
	eng := rpc.New(port, rpc.Options{Timeout: time.Second, Retries: 1, Window: window, DestWindow: 2})
	t.Cleanup(func() { eng.Close() })
	return New(eng, Options{}), port, jobs
}

func TestFanOutFillsTheWindowWhenJobsComePerDestination(t *testing.T) {
	// 8 jobs per PMA, listed PMA by PMA, and only two windows handed to
	// the engine at once: taken in list order they would reach 2 PMAs, 4
	// in flight; taken in turn they fill the window of 8.
	c, port, jobs := pmaFanOut(t, 16, 8, 8, 2*time.Millisecond)
	res := FanOut[mad.PortCounters](context.Background(), c, jobs)
	for i, r := range res {
		if r.Err != nil {
			t.Fatalf("job %d: %v", i, r.Err)
		}
		if int(r.Value.PortSelect) != i%8+1 || r.Value.SymbolErrorCounter != uint16(10+i/8) {
			t.Fatalf("job %d: PortSelect %d of LID %d's PMA, want port %d of LID %d", i, r.Value.PortSelect, r.Value.SymbolErrorCounter, i%8+1, 10+i/8)
		}
	}
	if all, one := port.MostInFlight(); all != 8 || one > 2 {
		t.Errorf("at most %d in flight, %d to one PMA; want 8, and 2 at most to one", all, one)
	}
}

func TestFanOutOnAClosedEngineFailsEveryJob(t *testing.T) {
	// Each Go fails at once, from inside the hand-over: 100,000 of them
	// must neither deepen the stack nor hang.
	c, _, jobs := pmaFanOut(t, 1, 1, 8, 0)
	c.Engine().Close()
	jobs = slices.Repeat(jobs, 100000)
	outs := make([]mad.Struct, len(jobs))
	for i := range outs {
		outs[i] = &mad.PortCounters{}
	}
	errs := FanOutStructs(context.Background(), c, jobs, outs)
	for i, err := range errs {
		if !errors.Is(err, umad.ErrClosed) {
			t.Fatalf("job %d: %v, want the closed engine's error", i, err)
		}
	}
}
