package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ibtool/ibtool/internal/cli/cmd/diagnose"
	"github.com/ibtool/ibtool/internal/cli/cmdutil"
	"github.com/ibtool/ibtool/internal/query"
	"github.com/ibtool/ibtool/internal/simfabric"
)

// The routing, credit-loop and multicast checks of diagnose on the
// simulator.

// noTrapSweeps is an OpenSM configuration that does not sweep when a
// switch reports a link change (trap 128): with -s 0 as well, OpenSM
// keeps the routes it made whatever happens to the fabric, as an SM
// that is down or has not reacted yet.
func noTrapSweeps(t *testing.T) string {
	t.Helper()
	conf := filepath.Join(t.TempDir(), "opensm.conf")
	if err := os.WriteFile(conf, []byte("sweep_on_trap FALSE\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return conf
}

// TestDiagnoseUnlinkedRoutesDeadEnd: a link between two switches
// unplugged after OpenSM routed the fabric, OpenSM not rerouting: both
// ends still send LIDs into the dead link. The routing check finds
// exactly that, one finding at each end. The only other findings are
// its consequence: the counters of the hosts whose LID route from here
// runs into the dead link, one way or back, cannot be read (a PMA read
// is LID routed), so the sweep is incomplete (exit 3); the other ports'
// counters are still read.
func TestDiagnoseUnlinkedRoutesDeadEnd(t *testing.T) {
	f := simfabric.StartOptsT(t, simfabric.Options{Topology: simfabric.TopologyPath("fattree-50.net"),
		OpenSMFlags: []string{"-s", "0", "-F", noTrapSweeps(t)}})
	if doc, r := diagJSON(t, f); len(problems(doc)) != 0 || r.Code != 0 {
		t.Fatalf("before the unlink: exit %d, %v", r.Code, problems(doc))
	}
	sweeps := smSweeps(t, f)
	if _, err := f.Console(`Unlink "leaf01"[12]`); err != nil {
		t.Fatal(err)
	}
	doc, r := diagJSON(t, f)
	var routing []string
	unread := 0
	for _, fd := range doc.Findings {
		switch {
		case fd.Severity == "info":
		case fd.Check == "routing":
			routing = append(routing, fd.String())
		case fd.Code == "walk.read_failed" && strings.Contains(fd.Message, "PortCounters") && fd.Remote != nil:
			unread++
		default:
			t.Errorf("unexpected finding %s: %s", fd, fd.Message)
		}
	}
	want := "routing.dead_end at leaf01[12]\nrouting.dead_end at spine01[1]"
	if got := strings.Join(routing, "\n"); got != want || r.Code != cmdutil.ExitIncomplete {
		t.Errorf("exit %d, routing findings:\n%s\nwant:\n%s", r.Code, got, want)
	}
	// Lost are the reads whose request or reply is routed into the dead
	// link: spine01 sends the local port's LID (1) out of it.
	var read int
	for _, fd := range doc.Findings {
		if fd.Code == "counters.interval" {
			fmt.Sscanf(fd.Message, "the counters of %d ports", &read)
		}
	}
	if unread == 0 || read == 0 {
		t.Errorf("counters of %d ports unread, %d read: want some lost to the dead link, the rest read", unread, read)
	}
	if n := smSweeps(t, f); n != sweeps {
		t.Errorf("OpenSM swept again (%d SUBNET UP, %d before): the routes were remade", n, sweeps)
	}
	// leaf01 sends spine01's LID and some of the hosts' behind the other
	// leaves into the dead link; spine01 every LID behind leaf01. Each
	// counter read lost says which of the two ends its request or reply.
	for _, fd := range rawFindings(t, doc, r.Stdout) {
		if fd["code"] == "walk.read_failed" {
			end := fmt.Sprintf("%v port %v", fd["route_end_node_guid"], fd["route_end_port"])
			if (fd["route_break"] != "request" && fd["route_break"] != "reply") || fd["route_end"] != "port-down" ||
				end != leaf01+" port 12" && end != spine01+" port 1" || !strings.Contains(fmt.Sprint(fd["message"]), "the LFTs read send the") {
				t.Errorf("a read lost to the dead link, not said so: %v", fd)
			}
		}
		if fd["code"] != "routing.dead_end" {
			continue
		}
		if fd["reason"] != "port_down" || fd["lids"].(float64) < 1 || fd["remote"] != nil {
			t.Errorf("%s: %v", fd["message"], fd)
		}
	}
	text := runSim(f, "", "diagnose")
	if !strings.Contains(text.Stdout, `error   routing.dead_end  "spine01" (0x7cfe900300300004) port 1: the LFT sends `) {
		t.Errorf("text:\n%s", text.Stdout)
	}
}

// The GUIDs of fattree-50's first leaf and spine.
const leaf01, spine01 = "0x7cfe900300300000", "0x7cfe900300300004"

// rawFindings are the findings of diagnose --json as maps, to read their
// evidence.
func rawFindings(t *testing.T, _ diagDoc, out string) []map[string]any {
	t.Helper()
	var doc struct {
		Findings []map[string]any `json:"findings"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Findings
}

// torusRoot is the GUID of the torus-3x3's first switch ("sw-r0c0"), the
// root OpenSM's up/down routing is given.
const torusRoot = "0x7cfe900300300000"

// TestDiagnoseCreditLoopsMinHopNotUpDown: a 3x3 torus routed by OpenSM's
// minhop engine has a credit loop, reported with a cycle that is a chain
// of links; the same torus routed up/down from one root has none, and
// nothing else is wrong with either.
func TestDiagnoseCreditLoopsMinHopNotUpDown(t *testing.T) {
	roots := filepath.Join(t.TempDir(), "roots")
	if err := os.WriteFile(roots, []byte(torusRoot+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, engine := range []struct {
		name  string
		flags []string
	}{
		{"minhop", []string{"-R", "minhop"}},
		{"updn", []string{"-R", "updn", "-a", roots}},
	} {
		t.Run(engine.name, func(t *testing.T) {
			f := simfabric.StartOptsT(t, simfabric.Options{Topology: simfabric.TopologyPath("torus-3x3.net"), OpenSMFlags: engine.flags})
			doc, r := diagJSON(t, f)
			got := strings.Join(problems(doc), "\n")
			raw := rawFindings(t, doc, r.Stdout)
			if engine.name == "updn" {
				if got != "" || r.Code != 0 {
					t.Fatalf("up/down: exit %d, findings:\n%s", r.Code, got)
				}
				return
			}
			// OpenSM's minhop (Debian's opensm 3.3) routes the hosts of
			// the torus with one loop, of 4 channels round the square of
			// rows 1-2 and columns 1-2.
			want := "credit_loops.loop at sw-r1c1[6] -> sw-r2c1[3]"
			if got != want || r.Code != diagnose.ExitFindings {
				t.Fatalf("minhop: exit %d, findings:\n%s\nwant:\n%s", r.Code, got, want)
			}
			checkLoopChains(t, f, raw)
			// The sweep read the SL2VL tables of the loop's 4 ports alone
			// (ibsim's switches: SL i on VL i, VL0-7 operational).
			for _, fd := range raw {
				if fd["code"] == "credit_loops.graph" && (fd["sl2vl_ports"] != 4.0 || fd["vls"] != 8.0) {
					t.Errorf("%s", fd["message"])
				}
			}
			// The SL2VL tables read for the loop, and the MFTs, are kept
			// by --output-dir: --load judges them the same.
			out := filepath.Join(t.TempDir(), "out")
			live := runSim(f, "", "diagnose", "--json", "--multicast", "--output-dir", out)
			offline := runSim(f, "", "diagnose", "--json", "--load", out)
			if live.Stdout != offline.Stdout || live.Code != offline.Code || !strings.Contains(live.Stdout, `"code": "multicast.groups"`) {
				t.Errorf("live (exit %d) and --load (exit %d) differ:\n%s", live.Code, offline.Code,
					simfabric.UnifiedDiff("live", "load", live.Stdout, offline.Stdout))
			}
			if tables, err := os.ReadFile(filepath.Join(out, "tables.json")); err != nil || !strings.Contains(string(tables), `"sl2vl": [`) {
				t.Errorf("tables.json: %v, no SL2VL tables:\n%.300s", err, tables)
			}
		})
	}
}

// checkLoopChains holds every credit loop's cycle to the fabric (as
// ibnetdiscover's cache has it): each port of it leads to the switch of
// the next, the last to the first's.
func checkLoopChains(t *testing.T, f *simfabric.Fabric, raw []map[string]any) {
	t.Helper()
	cache := filepath.Join(t.TempDir(), "fabric.cache")
	if r := runSim(f, "", "ibnetdiscover", "--cache", cache); r.Code != 0 {
		t.Fatal(r)
	}
	fab, err := query.LoadCache(cache)
	if err != nil {
		t.Fatal(err)
	}
	guid := func(v any) uint64 {
		g, err := strconv.ParseUint(strings.TrimPrefix(v.(string), "0x"), 16, 64)
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	for _, fd := range raw {
		if fd["code"] != "credit_loops.loop" {
			continue
		}
		cycle := fd["cycle"].([]any)
		if len(cycle) < 2 || fd["channels"].(float64) < float64(len(cycle)) {
			t.Errorf("%s: a cycle of %d in %v channels", fd["message"], len(cycle), fd["channels"])
		}
		for i, c := range cycle {
			a, b := c.(map[string]any), cycle[(i+1)%len(cycle)].(map[string]any)
			n := fab.Node(guid(a["node_guid"]))
			p := n.Port(int(a["port"].(float64)))
			if p == nil || p.Remote == nil || p.Remote.Node.GUID != guid(b["node_guid"]) {
				t.Errorf("%s: %s port %v does not lead to the next switch %s", fd["message"], a["node_name"], a["port"], b["node_name"])
			}
		}
	}
}

// ipoibBroadcast is the IPoIB broadcast group of the default partition,
// which OpenSM creates at start.
const ipoibBroadcast = "ff12:401b:ffff::ffff:ffff"

// TestDiagnoseMulticastTree: three hosts on different leaves join the
// IPoIB broadcast group and OpenSM builds its tree: --multicast finds
// nothing wrong, with the members from the SA (its SM_Key given, as
// sa_key in ibdiag.conf: OpenSM's default, 1) or from the MFTs' own ends
// (without it). Then the leaf of one member stops forwarding the group
// to it (its MFT set behind OpenSM's back): that member, at that port,
// is what the diagnosis reports.
func TestDiagnoseMulticastTree(t *testing.T) {
	// Periodic sweeps program the MFTs after a join; a light sweep does
	// not rewrite them.
	f := simfabric.StartOptsT(t, simfabric.Options{Topology: simfabric.TopologyPath("fattree-50.net"), OpenSMFlags: []string{"-s", "2"}})
	members := []string{"node0003", "node0020", "node0040"}
	for _, host := range members {
		gid := strings.Fields(runSim(f, host, "ibaddr").Stdout)
		if len(gid) < 2 || gid[0] != "GID" {
			t.Fatalf("%s: ibaddr %v", host, gid)
		}
		if r := runSim(f, host, "query", "SubnAdmSet", "MCMemberRecord", "-f", "MGID="+ipoibBroadcast, "-f", "PortGID="+gid[1], "-f", "JoinState=1", "--write"); r.Code != 0 {
			t.Fatal(r)
		}
	}
	conf := filepath.Join(t.TempDir(), "ibdiag.conf")
	if err := os.WriteFile(conf, []byte("sa_key=1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	groups := func(doc diagDoc, r simfabric.Result) map[string]any {
		for _, fd := range rawFindings(t, doc, r.Stdout) {
			if fd["code"] == "multicast.groups" {
				return fd
			}
		}
		t.Fatalf("no multicast.groups:\n%s", r.Stdout)
		return nil
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		doc, r := diagJSON(t, f, "--multicast")
		g := groups(doc, r)
		if g["members"] == float64(len(members)) {
			if got := problems(doc); len(got) != 0 || g["members_from"] != "mft" {
				t.Fatalf("the MFTs' ends: %v, %v", got, g)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("OpenSM did not build the tree within 30 s: %v", g["message"])
		}
		time.Sleep(200 * time.Millisecond)
	}
	doc, r := diagJSON(t, f, "--multicast", "--config", conf)
	if g := groups(doc, r); len(problems(doc)) != 0 || g["members_from"] != "sa" || g["members"] != float64(len(members)) {
		t.Fatalf("the SA's members: %v, %v", problems(doc), g)
	}

	// node0020's leaf stops forwarding the group to it.
	cache := filepath.Join(t.TempDir(), "fabric.cache")
	if r := runSim(f, "", "ibnetdiscover", "--cache", cache); r.Code != 0 {
		t.Fatal(r)
	}
	fab, err := query.LoadCache(cache)
	if err != nil {
		t.Fatal(err)
	}
	var leaf string
	var lid uint16
	var port int
	for _, n := range fab.Nodes {
		if n.Desc() == "node0020 HCA-1" {
			p := n.Port(1).Remote
			leaf, lid, port = p.Node.Desc(), p.Node.SMALID, p.Num
		}
	}
	mod := strconv.Itoa(port / 16 << 28) // block 0 (MLIDs 0xC000-0xC01F), the masks of ports 16*(port/16)...
	get := runSim(f, "", "query", "--json", "SubnGet", "MulticastForwardingTable", strconv.Itoa(int(lid)), "-a", mod)
	var mft struct {
		Reply struct {
			PortMasks []uint16 `json:"port_masks"`
		} `json:"reply"`
	}
	if err := json.Unmarshal([]byte(get.Stdout), &mft); err != nil || len(mft.Reply.PortMasks) == 0 || mft.Reply.PortMasks[0]&(1<<(port%16)) == 0 {
		t.Fatalf("%s's MFT for 0xC000: %v\n%s", leaf, err, get.Stdout)
	}
	mask := fmt.Sprintf("PortMask[0]=%d", mft.Reply.PortMasks[0]&^(1<<(port%16)))
	if r := runSim(f, "", "query", "SubnSet", "MulticastForwardingTable", strconv.Itoa(int(lid)), "-a", mod, "-f", mask, "--write"); r.Code != 0 {
		t.Fatal(r)
	}
	doc, r = diagJSON(t, f, "--multicast", "--config", conf)
	want := fmt.Sprintf("multicast.member_unreached at %s[%d] -> node0020 HCA-1[1]", leaf, port)
	if got := strings.Join(problems(doc), "\n"); got != want || r.Code != diagnose.ExitFindings {
		t.Errorf("exit %d, findings:\n%s\nwant:\n%s", r.Code, got, want)
	}
}
