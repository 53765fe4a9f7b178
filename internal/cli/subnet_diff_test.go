package cli

import (
	"encoding/binary"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ibtool/ibtool/internal/cache"
	"github.com/ibtool/ibtool/internal/cli/cmd/subnetdiff"
	"github.com/ibtool/ibtool/internal/cli/cmdutil"
	"github.com/ibtool/ibtool/internal/query"
	"github.com/ibtool/ibtool/internal/simfabric"
)

// TestSubnetDiffAfterALinkGoesDown: caches before and after an Unlink on a
// fabric of our own; the live fabric and the second cache both differ from
// the first in the same way.
func TestSubnetDiffAfterALinkGoesDown(t *testing.T) {
	f := simfabric.StartT(t, "tiny.net")
	dir := t.TempDir()
	before, after := filepath.Join(dir, "before.cache"), filepath.Join(dir, "after.cache")
	if r := runSim(f, "", "ibnetdiscover", "--cache", before); r.Code != 0 {
		t.Fatal(r)
	}
	same := runSim(f, "", "subnet_diff", before)
	if same.Code != 0 || !strings.Contains(same.Stdout, " All LIDs lead to the same end ports in both subnets.\n") ||
		strings.Contains(same.Stdout, "does not have") {
		t.Errorf("unchanged fabric: exit %d\n%s%s", same.Code, same.Stdout, same.Stderr)
	}
	if _, err := f.Console(`Unlink "Hca2"[1]`); err != nil {
		t.Fatal(err)
	}
	if r := runSim(f, "", "ibnetdiscover", "--cache", after); r.Code != 0 {
		t.Fatal(r)
	}
	live := runSim(f, "", "subnet_diff", before)
	files := runSim(f, "", "subnet_diff", before, after)
	want := `Current subnet has 4 end ports, reference subnet has 5 end ports
 All end ports in the current subnet are in the reference subnet.
 Reference subnet has 1 end port that the current subnet does not have:
   0x0000000000100004 "Hca2"
Current subnet has 4 nodes, reference subnet has 5 nodes
 All nodes in the current subnet are in the reference subnet.
 Reference subnet has 1 node that the current subnet does not have:
   0x0000000000100003 "Hca2"
Current subnet has 3 links, reference subnet has 4 links
 All links in the current subnet are in the reference subnet.
 Reference subnet has 1 link that the current subnet does not have:
   0x0000000000200000[4] "Switch1" <=> 0x0000000000100004[1] "Hca2"
 All links in both subnets have the same width and speed in both.
Current subnet has 4 LIDs, reference subnet has 5 LIDs
 1 LID leads to different end ports (LID: current, reference):
       3: -                  0x0000000000100004
`
	for name, r := range map[string]simfabric.Result{"live": live, "caches": files} {
		if r.Code != subnetdiff.ExitDifferent || r.Stdout != want {
			t.Errorf("%s: exit %d, stderr %q\n%s", name, r.Code, r.Stderr, simfabric.UnifiedDiff("want", "got", want, r.Stdout))
		}
	}
	// The other way round: what is new.
	r := runSim(f, "", "subnet_diff", after, before)
	if r.Code != subnetdiff.ExitDifferent || !strings.Contains(r.Stdout, " Current subnet has 1 link that the reference subnet does not have:\n   0x0000000000200000[4] \"Switch1\" <=> 0x0000000000100004[1] \"Hca2\"\n") {
		t.Errorf("reversed: exit %d\n%s", r.Code, r.Stdout)
	}
	r = runSim(f, "", "subnet_diff", "--json", before)
	var doc subnetdiff.SubnetDiffDoc
	if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil || r.Code != subnetdiff.ExitDifferent || doc.Same ||
		doc.Current.Links != 3 || doc.Reference.Links != 4 || len(doc.Links.ReferenceOnly) != 1 ||
		doc.Links.ReferenceOnly[0].B.NodeName != "Hca2" || len(doc.LIDs) != 1 || doc.LIDs[0].LID != 3 ||
		doc.LIDs[0].CurrentPortGUID != nil || doc.LIDs[0].ReferencePortGUID == nil || *doc.LIDs[0].ReferencePortGUID != 0x100004 || len(doc.EndPorts.CurrentOnly) != 0 {
		t.Errorf("--json: exit %d, %v\n%s", r.Code, err, r.Stdout)
	}
}

// TestSubnetDiffRatesAndLIDs: a link that runs slower and a port that got
// another LID, made by editing a cache.
func TestSubnetDiffRatesAndLIDs(t *testing.T) {
	f := sharedFabric(t, "tiny.net")
	dir := t.TempDir()
	ref, cur := filepath.Join(dir, "ref.cache"), filepath.Join(dir, "cur.cache")
	if r := runSim(f, "", "ibnetdiscover", "--cache", ref); r.Code != 0 {
		t.Fatal(r)
	}
	fab, err := cache.Read(ref)
	if err != nil {
		t.Fatal(err)
	}
	hca3 := fab.Node(0x100006).Port(1)
	hca3.PortInfo[35] = hca3.PortInfo[35]&0x0F | 2<<4 // LinkSpeedActive DDR
	hca3.PortInfo[31] = 8                             // LinkWidthActive 12X
	sw2 := fab.Node(0x200001).Port(1)
	sw2.PortInfo[35] = sw2.PortInfo[35]&0x0F | 2<<4
	sw2.PortInfo[31] = 8
	hca1 := fab.Node(0x100000).Port(1)
	hca1.BaseLID = 40
	binary.BigEndian.PutUint16(hca1.PortInfo[16:], 40)
	if err := cache.Write(cur, fab); err != nil {
		t.Fatal(err)
	}
	r := runSim(f, "", "subnet_diff", ref, cur)
	for _, want := range []string{
		" 1 link has a different width or speed (current, reference):\n   0x0000000000200001[1] \"sw2 desc\" <=> 0x0000000000100007[1] \"Hca3\": 12xDDR, 4xSDR\n",
		" 2 LIDs lead to different end ports (LID: current, reference):\n       2: -                  0x0000000000100001\n      40: 0x0000000000100001 -                 \n",
		" All links in the current subnet are in the reference subnet.\n",
	} {
		if r.Code != subnetdiff.ExitDifferent || !strings.Contains(r.Stdout, want) {
			t.Errorf("exit %d, want %q in\n%s", r.Code, want, r.Stdout)
		}
	}
	r = runSim(f, "", "subnet_diff", "--json", ref, cur)
	var doc subnetdiff.SubnetDiffDoc
	if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil || len(doc.Rates) != 1 || doc.Rates[0].Current.SpeedText != "DDR" ||
		doc.Rates[0].Reference.Width != "4X" || len(doc.LIDs) != 2 {
		t.Errorf("--json: %v\n%s", err, r.Stdout)
	}
}

// TestSubnetDiffFromTheSA: the current fabric from the SA's tables.
func TestSubnetDiffFromTheSA(t *testing.T) {
	f := sharedFabric(t, "fattree-50.net")
	file := filepath.Join(t.TempDir(), "ref.cache")
	writeCCache(t, f, file)
	fab, err := query.LoadCache(file)
	if err != nil {
		t.Fatal(err)
	}
	s := rmppSAOf(fab)
	r := runWith(s, "ibtool", "subnet_diff", "--sa", file)
	if r.code != 0 || s.smps() != 0 || !strings.Contains(r.stdout, "Current subnet has 50 nodes, reference subnet has 50 nodes\n") {
		t.Errorf("exit %d, %d SMPs, stderr %q\n%s", r.code, s.smps(), r.stderr, r.stdout)
	}
}

func TestSubnetDiffFailures(t *testing.T) {
	f := sharedFabric(t, "tiny.net")
	for _, tc := range []struct {
		args string
		code int
		msg  string
	}{
		{"", cmdutil.ExitUsage, "accepts 1 to 2 arguments, received 0"},
		{"a b c", cmdutil.ExitUsage, "accepts 1 to 2 arguments, received 3"},
		{"/nonexistent", cmdutil.ExitFailure, "reference /nonexistent:"},
		{"--discovery XY x", cmdutil.ExitUsage, `invalid --discovery "XY"`},
	} {
		r := runSim(f, "", append([]string{"subnet_diff"}, strings.Fields(tc.args)...)...)
		if r.Code != tc.code || !strings.Contains(r.Stderr, tc.msg) || r.Stdout != "" {
			t.Errorf("%q: exit %d, stderr %q, stdout %q; want exit %d and %q", tc.args, r.Code, r.Stderr, r.Stdout, tc.code, tc.msg)
		}
	}
}
