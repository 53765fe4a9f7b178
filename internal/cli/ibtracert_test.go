package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ibtool/ibtool/internal/cli/cmd/ibtracert"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/simfabric"
)

func TestIbtracertMatchesInfinibandDiags(t *testing.T) {
	f := sharedFabric(t, "tiny.net")
	for _, args := range []string{
		"2 4", "-n 2 4", "1 4", "4 1", "2 7", "7 2", "2 3", "2 2", "1 1", "-n 7 1", "-v 2 4", "-vv 2 4",
		"-G 0x100001 0x100007",
	} {
		conform(t, f, "", "ibtracert", strings.Fields(args)...)
	}
	// Failures: no LID 99 (with and without -f), a multicast group that
	// does not exist, one address through the symlink (usage).
	for _, args := range []string{"2 99", "99 2", "-f 2 99", "-m 0xc000 2 4", "2"} {
		conformCompat(simfabric.ExpectFailure(t), f, "", "ibtracert", strings.Fields(args)...)
	}
}

func TestIbtracertTorusAndFatTree(t *testing.T) {
	for _, topo := range []string{"torus-3x3.net", "fattree-50.net"} {
		f := sharedFabric(t, topo)
		lids := nodeLIDs(t, f)
		if len(lids) > 6 {
			lids = []string{lids[0], lids[1], lids[len(lids)/2], lids[len(lids)-2], lids[len(lids)-1]}
		}
		for _, s := range lids {
			for _, d := range lids {
				conform(t, f, "", "ibtracert", s, d)
			}
		}
	}
}

// nodeLIDs lists the LIDs ibnodes shows, switches and CAs.
func nodeLIDs(t *testing.T, f *simfabric.Fabric) []string {
	t.Helper()
	var lids []string
	for _, line := range strings.Split(strings.TrimSpace(runSim(f, "", "ibnodes").Stdout), "\n") {
		if i := strings.Index(line, " lid "); i >= 0 {
			lids = append(lids, strings.Fields(line[i+5:])[0])
		}
	}
	if len(lids) < 2 {
		t.Fatalf("ibnodes found %d LIDs", len(lids))
	}
	return lids
}

func TestIbtracertPortsFile(t *testing.T) {
	f := sharedFabric(t, "tiny.net")
	dir := t.TempDir()
	good := filepath.Join(dir, "pairs")
	os.WriteFile(good, []byte("# from to\n2 4\n\n   \n1 3\n4 7\n"), 0o644)
	bad := filepath.Join(dir, "bad")
	os.WriteFile(bad, []byte("2 4\n2\n"), 0o644)
	conform(t, f, "", "ibtracert", "--ports-file", good)
	conformCompat(simfabric.ExpectFailure(t), f, "", "ibtracert", "--ports-file", bad)
	conformCompat(simfabric.ExpectFailure(t), f, "", "ibtracert", "--ports-file", filepath.Join(dir, "missing"))
}

func TestIbtracertOneAddressAndJSON(t *testing.T) {
	f := sharedFabric(t, "tiny.net")
	// Attached to Switch1 (LID 1): one address traces from there.
	one := runSim(f, "", "ibtracert", "4")
	two := runSim(f, "", "ibtracert", "1", "4")
	if one.Code != 0 || one.Stdout != two.Stdout {
		t.Fatalf("one address (exit %d):\n%s\nwant:\n%s", one.Code, one.Stdout+one.Stderr, two.Stdout)
	}
	rev, fwd := runSim(f, "", "ibtracert", "-r", "2", "4"), runSim(f, "", "ibtracert", "4", "2")
	if rev.Code != 0 || rev.Stdout != fwd.Stdout {
		t.Fatalf("-r 2 4 (exit %d):\n%s\nwant 4 2:\n%s", rev.Code, rev.Stdout+rev.Stderr, fwd.Stdout)
	}
	r := runSim(f, "", "ibtracert", "--json", "2", "Hca3")
	var doc struct {
		Traces []struct {
			Destination struct {
				LID  int    `json:"lid"`
				Name string `json:"name"`
			} `json:"destination"`
			Hops []ibtracert.TraceHop `json:"hops"`
		} `json:"traces"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil || r.Code != 0 {
		t.Fatalf("exit %d, %v: %s%s", r.Code, err, r.Stdout, r.Stderr)
	}
	want := []ibtracert.TraceHop{
		{NodeGUID: 0x100000, NodeType: "ca", Name: "hca one", InPort: 0, OutPort: 1, LID: 2},
		{NodeGUID: 0x200000, NodeType: "switch", Name: "Switch1", InPort: 1, OutPort: 8, LID: 1},
		{NodeGUID: 0x200001, NodeType: "switch", Name: "sw2 desc", InPort: 4, OutPort: 1, LID: 7},
		{NodeGUID: 0x100006, NodeType: "ca", Name: "Hca3", InPort: 1, OutPort: 0, LID: 4},
	}
	if len(doc.Traces) != 1 || !equalHops(doc.Traces[0].Hops, want) || doc.Traces[0].Destination.LID != 4 || doc.Traces[0].Destination.Name != "Hca3" {
		t.Fatalf("hops:\n%+v\nwant\n%+v", doc.Traces, want)
	}
}

// caLID is the LID of the CA whose description starts with host, as
// ibnetdiscover shows it on the line after the CA's.
func caLID(t *testing.T, f *simfabric.Fabric, host string) string {
	t.Helper()
	lines := strings.Split(runSim(f, "", "ibnetdiscover").Stdout, "\n")
	for i, line := range lines {
		if strings.HasPrefix(line, "Ca") && strings.Contains(line, `# "`+host) && i+1 < len(lines) {
			if _, rest, ok := strings.Cut(lines[i+1], "# lid "); ok {
				return strings.Fields(rest)[0]
			}
		}
	}
	t.Fatalf("no CA %s in ibnetdiscover", host)
	return ""
}

func equalHops(a, b []ibtracert.TraceHop) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestIbtracertMulticast(t *testing.T) {
	simfabric.RequireSim(t, true)
	f, err := simfabric.Start(context.Background(), simfabric.Options{Topology: simfabric.TopologyPath("fattree-50.net")})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Stop()
	var mgid mad.GID
	mgid.UnmarshalText([]byte("ff12:601b:ffff::7"))
	hosts := []string{"node0002", "node0013", "node0040"}
	for _, h := range hosts {
		joinGroup(t, f, h, mgid)
	}
	time.Sleep(2 * time.Second)
	a, b := caLID(t, f, "node0002"), caLID(t, f, "node0040")
	mlid := ""
	for _, line := range strings.Split(runSim(f, "", "dump_fts", "-M").Stdout, "\n") {
		if strings.HasPrefix(line, "0xc0") {
			mlid = strings.Fields(line)[0]
			break
		}
	}
	if mlid == "" {
		t.Fatal("the join left no multicast route")
	}
	r := runSim(f, "", "ibtracert", "-m", mlid, a, b)
	if r.Code != 0 || !strings.Contains(r.Stdout, "To ca ") || !strings.Contains(r.Stdout, "From ca ") {
		t.Fatalf("multicast trace (exit %d):\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	for _, args := range [][]string{{"-m", mlid, a, b}, {"-n", "-m", mlid, b, a}} { // -v: the C tool adds lines with its pid and heap addresses
		conform(t, f, "", "ibtracert", args...)
	}
}
