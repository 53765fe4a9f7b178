package query

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/endport"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/rpc"
	"github.com/ibtool/ibtool/internal/simfabric"
	"github.com/ibtool/ibtool/internal/umad"
)

var tiny *simfabric.Fabric

func TestMain(m *testing.M) {
	umad.LingerMain() // the helper for a CONNECT given up on (see umad)
	code := m.Run()
	if tiny != nil {
		tiny.Stop()
	}
	os.Exit(code)
}

// client opens a Client on the tiny fabric's Hca1 (LID 2 ports: see
// testdata/topologies/tiny.net).
func client(t *testing.T, opts Options) *Client {
	t.Helper()
	simfabric.RequireSim(t, true)
	if tiny == nil {
		f, err := simfabric.Start(context.Background(), simfabric.Options{Topology: simfabric.TopologyPath("tiny.net")})
		if err != nil {
			t.Fatal(err)
		}
		tiny = f
	}
	port, err := umad.NewSim(umad.SimConfig{SockName: tiny.SockName(), Host: "Hca1"}).Open("", -1)
	if err != nil {
		t.Fatal(err)
	}
	eng := rpc.New(port, rpc.Options{Timeout: 200 * time.Millisecond, Retries: 1})
	t.Cleanup(func() { eng.Close() })
	return New(eng, opts)
}

func TestGetByDRAndLIDAgree(t *testing.T) {
	c := client(t, Options{})
	ctx := context.Background()
	var byDR mad.NodeInfo
	if err := c.Get(ctx, DR([]byte{0, 1}), 0, nil, &byDR); err != nil {
		t.Fatal(err)
	}
	if byDR.NodeType != mad.NodeTypeSwitch || byDR.NumPorts != 8 {
		t.Fatalf("DR 0,1 is Switch1 (8 ports): got type %d, %d ports", byDR.NodeType, byDR.NumPorts)
	}
	var sw mad.SwitchInfo
	if err := c.Get(ctx, DR([]byte{0, 1}), 0, nil, &sw); err != nil {
		t.Fatal(err)
	}
	var pi mad.PortInfo
	if err := c.Get(ctx, DR([]byte{0, 1}), 0, nil, &pi); err != nil {
		t.Fatal(err)
	}
	var byLID mad.NodeInfo
	if err := c.Get(ctx, LID(pi.LID), 0, nil, &byLID); err != nil {
		t.Fatal(err)
	}
	if byLID.NodeGUID != byDR.NodeGUID {
		t.Fatalf("LID %d answers as 0x%x, DR 0,1 as 0x%x", pi.LID, byLID.NodeGUID, byDR.NodeGUID)
	}
}

func TestGetStatusErrorNamesTheRequest(t *testing.T) {
	c := client(t, Options{})
	// A CA has no SwitchInfo: its SMA answers with an unsupported-attribute status.
	var sw mad.SwitchInfo
	err := c.Get(context.Background(), DR([]byte{0}), 0, nil, &sw)
	var se *rpc.StatusError
	if !errors.As(err, &se) {
		t.Fatalf("SwitchInfo of a CA: got %v, want a status error", err)
	}
	if !strings.Contains(err.Error(), "SwitchInfo") && !strings.Contains(err.Error(), "0x0011") {
		t.Errorf("the error does not name the request: %v", err)
	}
}

func TestGMPDestUsesTheSAPath(t *testing.T) {
	c := client(t, Options{PKeyIndex: 0})
	ctx := context.Background()
	local, err := c.Local()
	if err != nil {
		t.Fatal(err)
	}
	d, err := c.GMPDest(ctx, endport.Target{Kind: endport.ByGUID, GUID: local.PortGUID})
	if err != nil {
		t.Fatal(err)
	}
	if d.GMP.LID != local.LID || d.GMP.QP != 1 || d.GMP.QKey != umad.QP1QKey {
		t.Fatalf("path to our own GUID: %+v, want LID %d QP1", d.GMP, local.LID)
	}
	var cpi mad.ClassPortInfo
	if err := c.GetClass(ctx, mad.ClassPerf, d, 0, nil, &cpi); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, d, 0, nil, &cpi); err == nil {
		t.Fatal("Get of ClassPortInfo, carried by several classes, must ask for a class")
	}
}

func TestFanOutGivesEveryItemItsOwnResult(t *testing.T) {
	c := client(t, Options{})
	ctx := context.Background()
	f, err := (&Source{}).Fabric(ctx, c, Walk{})
	if err != nil {
		t.Fatal(err)
	}
	var jobs []Job
	var want []uint64
	for _, n := range f.SortedByGUID() {
		for _, p := range n.Ports {
			if p == nil || p.Info() == nil {
				continue
			}
			lid := p.Info().LID
			if n.Type == discovery.NodeSwitch {
				lid = n.Port(0).Info().LID
			}
			d, _ := c.GMPDestOrLID(ctx, lid)
			jobs = append(jobs, Job{Dest: d, In: &mad.PortCounters{PortSelect: uint8(p.Num)}})
			want = append(want, uint64(p.Num))
		}
	}
	// One job that cannot be answered: no node has LID 999.
	jobs = append(jobs, Job{Dest: GMPAddr(umad.Address{LID: 999, QP: 1, QKey: umad.QP1QKey}), In: &mad.PortCounters{PortSelect: 1}})
	res := FanOut[mad.PortCounters](ctx, c, jobs)
	if len(res) != len(jobs) {
		t.Fatalf("%d results for %d jobs", len(res), len(jobs))
	}
	for i, r := range res[:len(res)-1] {
		if r.Err != nil {
			t.Errorf("job %d (%s port %d): %v", i, jobs[i].Dest, want[i], r.Err)
			continue
		}
		if uint64(r.Value.PortSelect) != want[i] {
			t.Errorf("job %d: PortSelect %d in the reply, asked for %d", i, r.Value.PortSelect, want[i])
		}
	}
	if res[len(res)-1].Err == nil {
		t.Error("the job to LID 999 has no error")
	}
	if len(jobs) < 6 {
		t.Fatalf("only %d ports found on tiny", len(jobs)-1)
	}
}

func TestSetWithoutWriteIsRefusedBeforeSending(t *testing.T) {
	c := client(t, Options{})
	before := c.Engine().Stats().Sent
	pc := &mad.PortCounters{PortSelect: 1}
	d := GMPAddr(umad.Address{LID: 2, QP: 1, QKey: umad.QP1QKey})
	if err := c.Set(context.Background(), nil, d, 0, pc, nil); !errors.Is(err, ErrNoWrite) {
		t.Fatalf("Set without a Write: got %v, want ErrNoWrite", err)
	}
	if sent := c.Engine().Stats().Sent; sent != before {
		t.Fatalf("a refused Set sent %d MADs", sent-before)
	}
}

func TestSetIsLogged(t *testing.T) {
	var logged []string
	c := client(t, Options{Log: func(f string, a ...any) { logged = append(logged, f) }})
	ctx := context.Background()
	d, err := c.GMPDestOrLID(ctx, 2)
	if err != nil {
		t.Logf("no SA path: %v", err)
	}
	pc := &mad.PortCounters{PortSelect: 1, CounterSelect: 0xffff}
	if err := c.Set(ctx, &Write{By: "test"}, d, 0, pc, nil); err != nil {
		t.Fatal(err)
	}
	if len(logged) != 1 || !strings.Contains(logged[0], "write") {
		t.Fatalf("log lines %q, want one write line", logged)
	}
}

func TestSourceModes(t *testing.T) {
	for _, tc := range []struct {
		s     Source
		sa    bool
		mode  discovery.Mode
		usage bool
	}{
		{s: Source{}, mode: discovery.ModeAuto},
		{s: Source{Discovery: "dr"}, mode: discovery.ModeDR},
		{s: Source{Discovery: "SA"}, sa: true},
		{s: Source{SA: true}, sa: true},
		{s: Source{SA: true, Discovery: "LID"}, usage: true},
		{s: Source{Discovery: "bogus"}, usage: true},
	} {
		mode, sa, err := tc.s.Mode()
		var ue *UsageError
		if tc.usage != errors.As(err, &ue) {
			t.Errorf("%+v: error %v", tc.s, err)
			continue
		}
		if !tc.usage && (mode != tc.mode || sa != tc.sa) {
			t.Errorf("%+v: mode %v sa %v, want %v %v", tc.s, mode, sa, tc.mode, tc.sa)
		}
	}
}

func TestSetErrorIsTheRequestsOwn(t *testing.T) {
	c := client(t, Options{})
	ctx := context.Background()
	d, _ := c.GMPDestOrLID(ctx, 2)
	// Hca1 (LID 2) has two ports: its PMA refuses port 5.
	err := c.Set(ctx, &Write{By: "test"}, d, 0, &mad.PortCounters{PortSelect: 5, CounterSelect: 0xffff}, nil)
	var se *rpc.StatusError
	if !errors.As(err, &se) || !strings.HasPrefix(err.Error(), "PerformanceSet(PortCounters) LID 2") {
		t.Fatalf("Set of port 5: %v; want the status error, which names the request, as it is", err)
	}
}

// A fan-out borrows its replies (the transport reuses their memory for
// the next ones), so a status error must hold a copy of its reply.
func TestFanOutStatusErrorKeepsItsReply(t *testing.T) {
	c := client(t, Options{})
	jobs := make([]Job, 256)
	for i := range jobs {
		jobs[i] = Job{Dest: DR([]byte{0}), Mod: 1}
	}
	jobs[0].Mod = 99 // the local CA has no port 99: a status error
	res := FanOut[mad.PortInfo](context.Background(), c, jobs)
	var se *rpc.StatusError
	if !errors.As(res[0].Err, &se) {
		t.Fatalf("job 0: %v, want a StatusError", res[0].Err)
	}
	if status(se.Reply) == 0 || se.Reply.AttrMod() != 99 {
		t.Errorf("the error's reply has status %#x for port %d, want an error for port 99 (overwritten by a later reply?)", status(se.Reply), se.Reply.AttrMod())
	}
	// The fan-out reuses answered jobs' requests: never one an error keeps.
	if se.Req.AttrMod() != 99 {
		t.Errorf("the error's request asks for port %d, want 99 (reused for a later job?)", se.Req.AttrMod())
	}
	for i, r := range res[1:] {
		if r.Err != nil {
			t.Errorf("job %d: %v", i+1, r.Err)
		}
	}
}
