package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ibtool/ibtool/internal/cli/cmd/diagnose"
	"github.com/ibtool/ibtool/internal/cli/cmdutil"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/simfabric"
	"github.com/ibtool/ibtool/internal/topogen"
	"github.com/ibtool/ibtool/internal/umad"
)

// Faults injected through ibsim, each on a fabric of its own, and each
// found as exactly the finding it is, at its place, and nothing else
// (problems() leaves out the infos: sm.sm and counters.interval).

// quietSM are OpenSM's flags for a fabric faulted behind its back: no
// periodic sweep, so that it does not set right (or react to) what a
// test changed.
var quietSM = []string{"-s", "0"}

// TestDiagnoseLinkEnabledAt1X: a small fat tree (topogen, 4X EDR) with
// one switch link enabled for 1X at both ends (ibsim's w=1): that link
// runs below the width both ends support, while every other link between
// such ports runs 4X; exactly it is found, as a warning (its ends are
// enabled for no more: a configuration, not a failure).
func TestDiagnoseLinkEnabledAt1X(t *testing.T) {
	gen, err := topogen.Generate(topogen.Spec{Kind: topogen.FatTree2, Leaves: 2, Spines: 2, Hosts: 2, Degrade: 1, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	var degraded *topogen.Link
	for _, l := range gen.Links() {
		if l.Options != nil {
			degraded = l
		}
	}
	if degraded == nil || degraded.Options.Width != 1 {
		t.Fatalf("no link enabled for 1X: %+v", degraded)
	}
	topo := filepath.Join(t.TempDir(), "fattree-1x.net")
	if err := gen.WriteFile(topo); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(gen.Bytes(), []byte("w=1")) {
		t.Fatal("the net file has no w=1")
	}
	f := simfabric.StartT(t, topo)
	doc, r := diagJSON(t, f)
	end := func(e topogen.End) string { return fmt.Sprintf("%s[%d]", e.Node.Desc, e.Port) }
	// At the switch of the lesser GUID, whichever the generator made it.
	a, b := end(degraded.A), end(degraded.B)
	want := []string{"links.below_supported_width at " + a + " -> " + b, "links.below_supported_width at " + b + " -> " + a}
	got := problems(doc)
	if len(got) != 1 || !slices.Contains(want, got[0]) || r.Code != 0 || !*doc.Complete {
		t.Fatalf("exit %d, findings %v, want one of %v", r.Code, got, want)
	}
	var full struct {
		Findings []map[string]any `json:"findings"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &full); err != nil {
		t.Fatal(err)
	}
	for _, fd := range full.Findings {
		if fd["code"] == "links.below_supported_width" &&
			(fd["enabled_width"] != "1X" || fd["supported_width"] != "12X" || fd["peers_width"] != "4X" || fd["severity"] != "warning") {
			t.Errorf("evidence %v", fd)
		}
	}
}

// TestDiagnoseDuplicateGUID: Hca3 given Hca2's node GUID (ibsim's Guid).
// The walk, which knows nodes by GUID, takes the second for the first and
// leaves the port it found it behind without a link; the sweep asks
// what is there, and the ids check finds the GUID twice: at Switch1 port
// 4, the real Hca2 there, where the walk put the GUID behind sw2 desc's
// port 1 (Hca3).
func TestDiagnoseDuplicateGUID(t *testing.T) {
	f := simfabric.StartOptsT(t, simfabric.Options{Topology: simfabric.TopologyPath("tiny.net"), OpenSMFlags: quietSM})
	if doc, r := diagJSON(t, f); len(problems(doc)) != 0 || r.Code != 0 {
		t.Fatalf("before: exit %d, %v", r.Code, problems(doc))
	}
	if out, err := f.Console(`Guid "Hca3" 0x100003`); err != nil {
		t.Fatalf("%v %q", err, out)
	}
	doc, r := diagJSON(t, f)
	want := "ids.duplicate_node_guid at Switch1[4] -> Hca2[1]"
	if got := strings.Join(problems(doc), "\n"); got != want || r.Code != diagnose.ExitFindings || !*doc.Complete {
		t.Fatalf("exit %d, complete %v, findings:\n%s\nwant:\n%s", r.Code, *doc.Complete, got, want)
	}
	if !strings.Contains(r.Stdout, `"guid": "0x0000000000100003"`) || !strings.Contains(r.Stdout, `"dr_path": "0,4"`) {
		t.Errorf("evidence:\n%s", r.Stdout)
	}
}

// TestDiagnoseDuplicateLID: Hca3's port given Hca2's LID after the SM
// is up (ibsim's Baselid): found at Hca3, the later holder in GUID order.
func TestDiagnoseDuplicateLID(t *testing.T) {
	f := simfabric.StartOptsT(t, simfabric.Options{Topology: simfabric.TopologyPath("tiny.net"), OpenSMFlags: quietSM})
	lid := lidOf(t, f, hca2GUID)
	if out, err := f.Console(`Baselid "Hca3"[1] ` + lid); err != nil {
		t.Fatalf("%v %q", err, out)
	}
	doc, r := diagJSON(t, f)
	want := "ids.duplicate_lid at Hca3[1] -> sw2 desc[1]"
	if got := strings.Join(problems(doc), "\n"); got != want || r.Code != diagnose.ExitFindings || !*doc.Complete {
		t.Fatalf("exit %d, complete %v, findings:\n%s\nwant:\n%s", r.Code, *doc.Complete, got, want)
	}
	if !strings.Contains(r.Stdout, `"lid": `+lid+`,`) || !strings.Contains(r.Stdout, `"held_by": {`) {
		t.Errorf("evidence:\n%s", r.Stdout)
	}
}

// perfWatch is a transport that tells when the first PortCounters reply
// of each of some ports (LID, PortSelect) has come in: the first of the
// sweep's two reads has read them.
type perfWatch struct {
	umad.Opener
	mu   sync.Mutex
	want map[[2]int]bool
	read chan struct{} // closed once every wanted port was read
}

func newPerfWatch(o umad.Opener, ports ...[2]int) *perfWatch {
	w := &perfWatch{Opener: o, want: map[[2]int]bool{}, read: make(chan struct{})}
	for _, p := range ports {
		w.want[p] = true
	}
	return w
}

func (w *perfWatch) Open(ca string, port int) (umad.Port, error) {
	p, err := w.Opener.Open(ca, port)
	if err != nil {
		return nil, err
	}
	return &perfWatchPort{Port: p, w: w}, nil
}

func (w *perfWatch) saw(pkt *umad.Packet) {
	h := mad.Header(pkt.MAD)
	if pkt.Status != 0 || len(h) < mad.Size || h.Class() != mad.ClassPerf || !h.IsResponse() || h.AttrID() != mad.AttrPortCounters {
		return
	}
	key := [2]int{int(pkt.Addr.LID), int(h[mad.SMPDataOffset+1])}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.want[key] {
		delete(w.want, key)
		if len(w.want) == 0 {
			close(w.read)
		}
	}
}

// perfWatchPort shows every MAD received to its perfWatch; it keeps the
// simulator's window (InFlightLimiter).
type perfWatchPort struct {
	umad.Port
	w *perfWatch
}

func (p *perfWatchPort) Recv(deadline time.Time) (*umad.Packet, error) {
	pkt, err := p.Port.Recv(deadline)
	if err == nil {
		p.w.saw(pkt)
	}
	return pkt, err
}

func (p *perfWatchPort) MaxInFlight() int {
	if l, ok := p.Port.(umad.InFlightLimiter); ok {
		return l.MaxInFlight()
	}
	return 0
}

// runSimOn is runSim through transport tr.
func runSimOn(tr umad.Opener, args ...string) simfabric.Result {
	var out, errOut bytes.Buffer
	env := &cmdutil.Env{IO: cmdutil.IO{In: strings.NewReader(""), Out: &out, Err: &errOut}, Transport: tr}
	code := run(append([]string{"ibtool"}, args...), env)
	return simfabric.Result{Stdout: out.String(), Stderr: errOut.String(), Code: code}
}

// TestDiagnoseCounters: counters set with PerformanceSet before the
// sweep and during its interval. hca one's 20 link downs (before) are
// beyond the threshold of 10: a warning. During the interval Hca2's
// receive errors rise (an error) and sw2 desc's port 1 counts 3 symbol
// errors: a bit error rate at its 4X SDR. Nothing else, though every
// MAD moved the data counters meanwhile; and a threshold file moves the
// limit.
func TestDiagnoseCounters(t *testing.T) {
	f := simfabric.StartT(t, "tiny.net")
	if _, err := f.Console(`PerformanceSet "Hca1"[1] PortCounters.LinkDownedCounter=20`); err != nil {
		t.Fatal(err)
	}
	hca2, _ := strconv.Atoi(lidOf(t, f, hca2GUID))
	const sw2LID = 7 // tiny.net presets it
	watch := newPerfWatch(umad.NewSim(umad.SimConfig{SockName: f.SockName()}), [2]int{hca2, 1}, [2]int{sw2LID, 1})
	during := make(chan error, 1)
	go func() {
		select {
		case <-watch.read:
		case <-time.After(30 * time.Second):
			during <- fmt.Errorf("the first read of Hca2[1] and sw2 desc[1] did not come")
			return
		}
		for _, set := range []string{`PerformanceSet "Hca2"[1] PortCounters.PortRcvErrors=5`, `PerformanceSet "Switch2"[1] PortCounters.SymbolErrorCounter=3`} {
			if out, err := f.Console(set); err != nil {
				during <- fmt.Errorf("%s: %v %q", set, err, out)
				return
			}
		}
		during <- nil
	}()
	r := runSimOn(watch, "diagnose", "--json", "--interval", "2")
	if err := <-during; err != nil {
		t.Fatal(err)
	}
	var doc diagDoc
	if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil || doc.Complete == nil {
		t.Fatalf("exit %d: %v\n%s%s", r.Code, err, r.Stdout, r.Stderr)
	}
	want := "counters.increasing at Hca2[1] -> Switch1[4]\n" +
		"counters.symbol_errors at sw2 desc[1] -> Hca3[1]\n" +
		"counters.above_threshold at hca one[1] -> Switch1[1]"
	if got := strings.Join(problems(doc), "\n"); got != want || r.Code != diagnose.ExitFindings || !*doc.Complete {
		t.Fatalf("exit %d, findings:\n%s\nwant:\n%s", r.Code, got, want)
	}
	var full struct {
		Findings []struct {
			Code      string  `json:"code"`
			Counter   string  `json:"counter"`
			Increase  uint64  `json:"increase"`
			Interval  int64   `json:"interval_ms"`
			BitRate   float64 `json:"bit_rate_gbps"`
			BER       float64 `json:"bit_error_rate"`
			Lowest    float64 `json:"lowest_measurable_bit_error_rate"`
			Threshold uint64  `json:"threshold"`
		} `json:"findings"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &full); err != nil {
		t.Fatal(err)
	}
	for _, fd := range full.Findings {
		secs := float64(fd.Interval) / 1000
		switch fd.Code {
		case "counters.increasing":
			if fd.Counter != "PortRcvErrors" || fd.Increase != 5 || fd.Interval < 2000 {
				t.Errorf("rise: %+v", fd)
			}
		case "counters.symbol_errors":
			// 4X SDR: 4 lanes of 2.5 Gb/s.
			if fd.Increase != 3 || fd.BitRate != 10 || !closeTo(fd.BER, 3/(secs*1e10)) || !closeTo(fd.Lowest, 1/(secs*1e10)) {
				t.Errorf("symbol errors: %+v", fd)
			}
		case "counters.above_threshold":
			if fd.Counter != "LinkDownedCounter" || fd.Threshold != 10 {
				t.Errorf("threshold: %+v", fd)
			}
		}
	}
	// A threshold file in ibqueryerrors' format: 20 link downs are
	// within 30; the rises are over, the totals stay below their limits.
	th := filepath.Join(t.TempDir(), "error_thresholds")
	if err := os.WriteFile(th, []byte("# ours\nLinkDownedCounter=30\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if doc, r := diagJSON(t, f, "--threshold-file", th); len(problems(doc)) != 0 || r.Code != 0 {
		t.Errorf("with LinkDownedCounter=30: exit %d, %v", r.Code, problems(doc))
	}
	if doc, _ := diagJSON(t, f); strings.Join(problems(doc), "\n") != "counters.above_threshold at hca one[1] -> Switch1[1]" {
		t.Errorf("the defaults again: %v", problems(doc))
	}
	wantFailure(t, runSim(f, "", "diagnose", "--interval", "later"), cmdutil.ExitUsage, `"later" is not a number of seconds or a duration`)
	wantFailure(t, runSim(f, "", "diagnose", "--threshold-file", th+".none"), cmdutil.ExitFailure, "--threshold-file: threshold file: open ")
}

func closeTo(got, want float64) bool { return got > want*0.999 && got < want*1.001 }

// TestDiagnoseUnderMADLoss: ibsim's Error drops 20% of the MADs into
// every port of sw2 desc (Switch2): those to it and to Hca3 behind it.
// The engine resends what is lost (--retries 10: more resends on a lossy
// fabric), so in 10 of 10 sweeps every read answers, and no check finds
// what the loss-free sweep does not, but the loss itself: walk.mads_lost,
// and the PortRcvErrors ibsim counts at the ports of Switch2 ("sw2
// desc") for each packet it drops entering them, as a port counts the
// packets a bad link corrupts. Those are the fault, found where it is.
func TestDiagnoseUnderMADLoss(t *testing.T) {
	f := simfabric.StartOptsT(t, simfabric.Options{Topology: simfabric.TopologyPath("tiny.net"), OpenSMFlags: quietSM})
	args := []string{"--interval", "0.2", "--retries", "10"}
	base, r := diagJSON(t, f, args...)
	if !*base.Complete || r.Code != 0 {
		t.Fatalf("without loss: exit %d, %v", r.Code, problems(base))
	}
	clean := map[string]bool{}
	for _, p := range problems(base) {
		clean[p] = true
	}
	if _, err := f.Console(`Error "Switch2" 20`); err != nil {
		t.Fatal(err)
	}
	lossReported, rcvErrors := 0, 0
	for run := range 10 {
		doc, r := diagJSON(t, f, args...)
		if !*doc.Complete {
			t.Errorf("run %d: incomplete (exit %d): %v\n%s", run, r.Code, problems(doc), r.Stderr)
			continue
		}
		var full struct {
			Findings []struct {
				diagFinding
				Counter string `json:"counter"`
			} `json:"findings"`
		}
		if err := json.Unmarshal([]byte(r.Stdout), &full); err != nil {
			t.Fatal(err)
		}
		for _, fd := range full.Findings {
			switch p := fd.String(); {
			case fd.Severity == "info" || clean[p]:
			case fd.Code == "walk.mads_lost":
				lossReported++
			case strings.HasPrefix(fd.Code, "counters.") && fd.Counter == "PortRcvErrors" && fd.NodeName == "sw2 desc":
				rcvErrors++
			default:
				t.Errorf("run %d: %s, which the loss-free sweep does not find", run, p)
			}
		}
	}
	if lossReported == 0 {
		t.Error("no walk.mads_lost in 10 sweeps at 20% loss: the loss went unreported")
	}
	t.Logf("10 sweeps at 20%% loss: %d walk.mads_lost, %d counters findings of PortRcvErrors at sw2 desc", lossReported, rcvErrors)
}
