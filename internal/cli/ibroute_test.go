package cli

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ibtool/ibtool/internal/cli/cmdutil"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/simfabric"
	"github.com/ibtool/ibtool/internal/umad"
)

func TestIbrouteMatchesInfinibandDiags(t *testing.T) {
	f := sharedFabric(t, "tiny.net")
	for _, args := range [][]string{
		{"1"}, {"7"}, {"-a", "7"}, {"-n", "1"}, {"1", "2", "5"}, {"1", "0x2", "0x4"},
		{"-D", "0,8"}, {"-G", "0x200001"}, {"-a", "-n", "1", "0", "300"},
		{"-M", "1"}, {"-M", "-n", "1"}, {"-M", "-a", "7", "0xc000", "0xc003"}, {"-M", "-v", "7", "0xc000", "0xc040"},
	} {
		conform(t, f, "", "ibroute", args...)
	}
	// Failures, through the symlink: no node at LID 99, a CA, a name the
	// C tool does not know, a bad CA.
	for _, args := range [][]string{{"99"}, {"2"}, {"bogus"}, {"-C", "bogus", "1"}} {
		conformCompat(simfabric.ExpectFailure(t), f, "", "ibroute", args...)
	}
}

// conformCompat is conform with ibtool run through the tool's symlink,
// where failures are printed as the C tool prints them.
func conformCompat(t testing.TB, f *simfabric.Fabric, host string, tool string, args ...string) {
	t.Helper()
	simfabric.RequireTools(t, tool)
	c := f.RunC(context.Background(), host, tool, args...)
	r := runWith(umad.NewSim(umad.SimConfig{SockName: f.SockName(), Host: host}), append([]string{tool}, args...)...)
	ours := simfabric.Result{Stdout: r.stdout, Stderr: r.stderr, Code: r.code}
	progName := func(s string) string { return strings.ReplaceAll(s, "/usr/sbin/"+tool+": ", tool+": ") }
	simfabric.Compare(t, tool+" "+strings.Join(args, " "), c, ours, simfabric.DropSimNoise, progName)
}

func TestDumpFtsMatchesInfinibandDiags(t *testing.T) {
	for _, topo := range []string{"tiny.net", "torus-3x3.net", "fattree-50.net"} {
		f := sharedFabric(t, topo)
		for _, tool := range []string{"dump_fts", "dump_lfts", "dump_mfts"} {
			for _, args := range [][]string{{}, {"-a"}, {"-n"}, {"0x2", "0x9"}, {"-M", "-a", "0xc000", "0xc002"}} {
				conform(t, f, "", tool, args...)
			}
		}
	}
}

// TestRoutesWithLMC: with LMC 2 a port has 4 LIDs; the LIDs after its
// base are shown as paths of it, as dump_lid does.
func TestRoutesWithLMC(t *testing.T) {
	simfabric.RequireSim(t, true)
	f, err := simfabric.Start(context.Background(), simfabric.Options{
		Topology: simfabric.TopologyPath("ibsim-2sw2path4hca2port.net"), OpenSMFlags: []string{"-l", "2"}})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Stop()
	out := runSim(f, "", "ibroute", "-a", "1").Stdout
	if !strings.Contains(out, "(path #2 out of 4: portguid") {
		t.Fatalf("no LMC paths in\n%s", out)
	}
	for _, args := range [][]string{{"ibroute", "1"}, {"ibroute", "-a", "8"}, {"dump_fts"}, {"dump_fts", "-a"}} {
		conform(t, f, "", args[0], args[1:]...)
	}
}

// joinGroup makes host a full member of a multicast group through the SA,
// so OpenSM programs the switches' multicast tables.
func joinGroup(t *testing.T, f *simfabric.Fabric, host string, mgid mad.GID) {
	t.Helper()
	client, local, done := simSA(t, f, host)
	defer done()
	r := mad.MCMemberRecord{MGID: mgid, QKey: 0xb1b, PKey: 0xffff, JoinState: 1}
	for i := 0; i < 8; i++ {
		r.PortGID[i] = byte(local.GIDPrefix >> (56 - 8*i))
		r.PortGID[8+i] = byte(local.PortGUID >> (56 - 8*i))
	}
	if local.GIDPrefix == 0 {
		r.PortGID[0], r.PortGID[1] = 0xfe, 0x80
	}
	mask := mad.MustCompMask(r.Desc(), "MGID", "PortGID", "QKey", "PKey", "SL", "FlowLabel", "TClass", "JoinState")
	if _, err := client.Set(context.Background(), mad.AttrMCMemberRecord, mad.Encode(&r), mask); err != nil {
		t.Fatalf("joining %s from %s: %v", mgid, host, err)
	}
}

func TestMulticastTablesMatchInfinibandDiags(t *testing.T) {
	simfabric.RequireSim(t, true)
	f, err := simfabric.Start(context.Background(), simfabric.Options{Topology: simfabric.TopologyPath("fattree-50.net")})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Stop()
	hosts := []string{"node0002", "node0007", "node0013", "node0040"}
	for i, g := range []string{"ff12:601b:ffff::1", "ff12:601b:ffff::2"} {
		var mgid mad.GID
		if err := mgid.UnmarshalText([]byte(g)); err != nil {
			t.Fatal(err)
		}
		for _, h := range hosts[i:] {
			joinGroup(t, f, h, mgid)
		}
	}
	time.Sleep(2 * time.Second) // OpenSM programs the MFTs after the joins
	out := runSim(f, "", "dump_fts", "-M").Stdout
	if !strings.Contains(out, "\n0xc001 ") {
		t.Fatalf("the joins left no multicast routes:\n%s", out)
	}
	for _, args := range [][]string{{"dump_fts", "-M"}, {"dump_fts", "-M", "-n"}, {"dump_mfts"}, {"dump_fts", "-M", "0xc000", "0xc001"}} {
		conform(t, f, "", args[0], args[1:]...)
	}
	sw := strings.Fields(strings.SplitN(runSim(f, "", "ibswitches").Stdout, "\n", 2)[0])
	lid := sw[len(sw)-3]
	for _, args := range [][]string{{"-M", lid}, {"-M", "-n", lid}, {"-M", "-a", lid, "0xc000", "0xc004"}} {
		conform(t, f, "", "ibroute", args...)
	}
}

func TestIbrouteJSON(t *testing.T) {
	f := sharedFabric(t, "tiny.net")
	r := runSim(f, "", "ibroute", "--json", "1")
	var doc struct {
		Switches []struct {
			NodeGUID string `json:"node_guid"`
			Unicast  []struct {
				LID          int    `json:"lid"`
				Port         int    `json:"port"`
				DestNodeGUID string `json:"dest_node_guid"`
				DestName     string `json:"dest_node_name"`
				DestType     string `json:"dest_node_type"`
				DestPort     int    `json:"dest_port"`
			} `json:"unicast"`
		} `json:"switches"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil || r.Code != 0 {
		t.Fatalf("exit %d, %v:\n%s", r.Code, err, r.Stdout)
	}
	if len(doc.Switches) != 1 || doc.Switches[0].NodeGUID != "0x0000000000200000" {
		t.Fatalf("switches: %+v", doc.Switches)
	}
	var hca3 bool
	for _, e := range doc.Switches[0].Unicast {
		if e.LID == 4 {
			hca3 = e.Port == 8 && e.DestName == "Hca3" && e.DestType == "ca" && e.DestNodeGUID != "" && e.DestPort == 1
		}
	}
	if !hca3 {
		t.Fatalf("LID 4 should go out of port 8 to Hca3: %+v", doc.Switches[0].Unicast)
	}
}

// dump_fts --load-cache: the topology from a cache, the tables live.
func TestDumpFtsFromACache(t *testing.T) {
	f := sharedFabric(t, "tiny.net")
	file := filepath.Join(t.TempDir(), "tiny.cache")
	if r := runSim(f, "", "ibnetdiscover", "--cache", file); r.Code != 0 {
		t.Fatalf("ibnetdiscover --cache: %+v", r)
	}
	live := runSim(f, "", "dump_fts", "-a")
	cached := runSim(f, "", "dump_fts", "-a", "--load-cache", file)
	if cached.Code != 0 || cached.Stdout != live.Stdout {
		t.Fatalf("from the cache (exit %d):\n%s\nlive:\n%s", cached.Code, cached.Stdout+cached.Stderr, live.Stdout)
	}
}

func TestIbrouteTargetByName(t *testing.T) {
	f := sharedFabric(t, "tiny.net")
	byName := runSim(f, "", "ibroute", "sw2 desc")
	byLID := runSim(f, "", "ibroute", "7")
	if byName.Code != 0 || byName.Stdout != byLID.Stdout {
		t.Fatalf("by name (exit %d):\n%s\nby LID:\n%s", byName.Code, byName.Stdout+byName.Stderr, byLID.Stdout)
	}
	r := runSim(f, "", "ibroute", "nosuchswitch")
	wantFailure(t, r, cmdutil.ExitUsage, `no node is named "nosuchswitch"`)
}
