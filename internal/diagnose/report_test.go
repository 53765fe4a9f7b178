package diagnose

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ibtool/ibtool/internal/cache"
	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/jsonv"
	"github.com/ibtool/ibtool/internal/mad"
)

// faulted is tiny with a finding of most checks: an Init port, a port
// with another SM LID, an unplugged link (against the expected fabric),
// a walk error and MAD loss.
func faulted(t *testing.T) (*Snapshot, *Config) {
	t.Helper()
	ref := newTiny()
	path := filepath.Join(t.TempDir(), "before.cache")
	if err := cache.Write(path, ref.s.Fabric); err != nil {
		t.Fatal(err)
	}
	exp, err := LoadExpected(path)
	if err != nil {
		t.Fatal(err)
	}
	tn := newTiny()
	setPI(tn.hst.Port(1), func(pi *mad.PortInfo) { pi.PortState = mad.PortStateInit })
	setPI(tn.sw2.Port(0), func(pi *mad.PortInfo) { pi.MasterSMLID = 9 })
	p := tn.sw1.Port(6)
	p.Remote.Remote, p.Remote = nil, nil
	tn.s.Fabric.Errors = []*discovery.WalkError{{DRPath: []byte{0, 1, 7}, What: "NodeInfo", Err: errTimeout}}
	tn.s.Loss = []DestLoss{{Dest: "DR path 0,1,5", Attempts: 20, NoReply: 3, Replies: 17}}
	tn.s.PKeys = []PKeyRead{{Port: tn.sw2.Port(1), PKeys: []uint16{0xffff, 0x8001}}, {Port: tn.hst.Port(1), Err: errTimeout}}
	setPI(tn.sw1.Port(2), func(pi *mad.PortInfo) {}) // a port without link, read
	tn.sw1.Port(3).MlnxExtPortInfo = mad.Encode(&mad.MlnxExtPortInfo{LinkSpeedActive: 1})
	return tn.s, &Config{ExpectWidth: "4X", ExpectSpeed: "SDR", Expected: exp}
}

func TestRunOrdersAndCounts(t *testing.T) {
	s, cfg := faulted(t)
	r := Run(s, cfg, Checks())
	if r.Complete {
		t.Error("complete with a walk error")
	}
	if r.Fabric != (FabricSummary{Nodes: 4, Switches: 2, CAs: 2, Links: 3}) {
		t.Errorf("fabric %+v", r.Fabric)
	}
	var got []string
	for _, f := range r.Findings {
		got = append(got, f.Check+" "+f.Severity.String()+" "+f.Code)
	}
	want := []string{
		"walk error walk.no_answer", "walk error walk.read_failed", "walk warning walk.mads_lost",
		"sm error sm.sm_lid_mismatch", "sm info sm.sm",
		"links error links.port_init",
		"counters info counters.interval",
		"topology error topology.link_missing",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	sum := map[string]CheckSummary{}
	for _, c := range r.Summary {
		sum[c.Check] = c
	}
	if len(r.Summary) != len(Checks()) || sum["walk"].Errors != 2 || sum["walk"].Warnings != 1 || sum["sm"].Infos != 1 ||
		sum["nodes"] != (CheckSummary{Check: "nodes"}) || r.Errors(false) != 5 || r.Errors(true) != 6 {
		t.Errorf("summary %+v, %d errors", r.Summary, r.Errors(false))
	}
}

// The report's JSON follows the vocabulary, and a finding's keys come in
// the documented order, its evidence after them.
func TestReportJSON(t *testing.T) {
	s, cfg := faulted(t)
	doc, err := json.Marshal(Run(s, cfg, Checks()))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range jsonv.Check(doc) {
		t.Error(v)
	}
	var back struct {
		Complete *bool            `json:"complete"`
		Summary  []map[string]any `json:"summary"`
		Findings []map[string]any `json:"findings"`
	}
	if err := json.Unmarshal(doc, &back); err != nil || back.Complete == nil || len(back.Summary) == 0 || len(back.Findings) == 0 {
		t.Fatalf("%v: %s", err, doc)
	}
	f, _ := json.Marshal(Run(s, cfg, []Check{linksCheck{}}).Findings[0])
	want := `{"check":"links","code":"links.port_init","severity":"error","message":"the port is in state Initialize, physical state LinkUp: the SM has not made it Active",` +
		`"node_guid":"0x0000000000000400","node_name":"host2 HCA-1","node_type":"ca","port":1,` +
		`"remote":{"node_guid":"0x0000000000000300","node_name":"sw2","node_type":"switch","port":1,"port_guid":"0x0000000000000300","lid":4},` +
		`"state":2,"state_text":"Initialize","physical_state":5,"physical_state_text":"LinkUp"}`
	if string(f) != want {
		t.Errorf("finding JSON:\n%s\nwant:\n%s", f, want)
	}
}

// A snapshot saved and loaded again gives the same report, byte for byte.
func TestSaveLoadSameFindings(t *testing.T) {
	s, cfg := faulted(t)
	before, err := json.Marshal(Run(s, cfg, Checks()))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "out")
	if err := Save(dir, s, cfg); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{FabricFile, FabricFile + cache.CompanionSuffix, SnapshotFile, "expected.cache"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Error(err)
		}
	}
	s2, _, _ := loadJudged(t, dir, before)
	if len(s2.Fabric.Node(0x200).Port(3).MlnxExtPortInfo) == 0 || len(s2.PKeys) != 2 || s2.PKeys[0].PKeys[1] != 0x8001 {
		t.Errorf("the Mellanox extended PortInfo or the P_Key tables were lost: %+v", s2.PKeys)
	}
}

func TestLoadRefusesBadSnapshots(t *testing.T) {
	s, cfg := faulted(t)
	dir := t.TempDir()
	if err := Save(dir, s, cfg); err != nil {
		t.Fatal(err)
	}
	doc, _ := os.ReadFile(filepath.Join(dir, SnapshotFile))
	for _, tc := range []struct{ from, to, want string }{
		{`"version": 2`, `"version": 9`, "version 9"},
		{`"expected_file": "expected.cache"`, `"expected_file": "../x"`, "not a file of the directory"},
		{`"node_guid": "0x0000000000000300"`, `"node_guid": "0x0000000000000999"`, "no node 0x0000000000000999"},
	} {
		bad := strings.Replace(string(doc), tc.from, tc.to, 1)
		if bad == string(doc) {
			t.Fatalf("%q not in the snapshot", tc.from)
		}
		if err := os.WriteFile(filepath.Join(dir, SnapshotFile), []byte(bad), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, _, err := Load(dir); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.to, err, tc.want)
		}
	}
}
