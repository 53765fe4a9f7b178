package ibidsverify

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ibtool/ibtool/internal/cli/render"
	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/fabricids"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/nodename"
	"github.com/ibtool/ibtool/internal/rpc"
	"github.com/ibtool/ibtool/internal/simfabric"
	"github.com/ibtool/ibtool/internal/umad/umadtest"
)

// discover walks an in-memory fabric from its first node.
func discover(t *testing.T, fab *umadtest.Fabric) *discovery.Fabric {
	eng := rpc.New(umadtest.NewPort(fab.Answer, umadtest.WithInfo(fab.LocalInfo())),
		rpc.Options{Timeout: 30 * time.Millisecond, Retries: 1})
	t.Cleanup(func() { eng.Close() })
	f, err := discovery.Discover(context.Background(), eng, discovery.Options{Mode: discovery.ModeDR})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// setPortGUID makes a one-port CA's NodeInfo give another port GUID.
func setPortGUID(n *umadtest.Node, guid uint64) {
	n.Set(0, &mad.NodeInfo{BaseVersion: 1, ClassVersion: 1, NodeType: mad.NodeTypeCA, NumPorts: 1,
		SystemImageGUID: mad.GUID(n.GUID), NodeGUID: mad.GUID(n.GUID), PortGUID: mad.GUID(guid), LocalPortNum: 1})
}

// troubledFabric has every problem the script finds and a line its
// patterns misread: a LID twice, a LID 0, a port GUID twice, a port GUID
// that is the GUID of a node read before it (and one of a node read
// after it, which the script does not see), and a switch whose name
// holds a ')'.
func troubledFabric(t *testing.T) *discovery.Fabric {
	fab := umadtest.NewFabric()
	host := fab.AddCA(0x100, 1, "host")
	sw1 := fab.AddSwitch(0x200, 8, "sw1")
	sw2 := fab.AddSwitch(0x300, 8, "sw2 (rack 4)")
	a := fab.AddCA(0x400, 1, "a")
	b := fab.AddCA(0x500, 1, "b")
	c := fab.AddCA(0x600, 1, "c")
	d := fab.AddCA(0x700, 1, "d")
	e := fab.AddCA(0x800, 1, "e")
	fab.Link(host, 1, sw1, 1)
	fab.Link(sw1, 2, sw2, 2)
	fab.Link(sw1, 3, a, 1)
	fab.Link(sw1, 4, b, 1)
	fab.Link(sw2, 3, c, 1) // c's line names sw2: its port GUID is not read
	fab.Link(sw1, 5, d, 1)
	fab.Link(sw1, 6, e, 1)
	b.SetLID(1, a.LID(1))
	c.SetLID(1, 0)
	setPortGUID(b, a.PortGUID(1))
	setPortGUID(c, a.PortGUID(1)) // unread, so not found twice
	setPortGUID(d, c.GUID)        // CAs print newest first: c before d
	setPortGUID(e, host.GUID)     // host after e
	return discover(t, fab)
}

// backToBack is two CAs linked to each other: each one's port line ends
// in the peer's port GUID, which the script reads as part of its own, so
// their equal port GUIDs are not found.
func backToBack(t *testing.T) *discovery.Fabric {
	fab := umadtest.NewFabric()
	host := fab.AddCA(0x100, 1, "host")
	peer := fab.AddCA(0x900, 1, "peer")
	fab.Link(host, 1, peer, 1)
	setPortGUID(peer, host.PortGUID(1))
	return discover(t, fab)
}

// topology is the fabric's ibnetdiscover -g text, and the uses read from
// the model in its order.
func topology(t *testing.T, f *discovery.Fabric) ([]byte, []fabricids.Use) {
	names := nodename.Open("", io.Discard)
	var buf bytes.Buffer
	tp := render.NewTopoPrinter(f, names, false)
	tp.W = bufio.NewWriter(&buf)
	tp.Topology(true, false)
	if err := tp.W.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), scriptUses(tp, names)
}

func scriptText(uses []fabricids.Use) string {
	var b strings.Builder
	for _, p := range fabricids.Check(uses, fabricids.Script) {
		b.WriteString(scriptProblem(p).Text)
	}
	return b.String()
}

var scriptFindings = []struct {
	name   string
	fabric func(*testing.T) *discovery.Fabric
	want   string
}{
	{"troubled", troubledFabric, "LID 0 found for ca NodeGUID 0x600\n" +
		"PortGUID 0x600 is an invalid duplicate of a NodeGUID\n" +
		"LID 4 already defined for NodeGUID 0x500\n" +
		"PortGUID 0x401 already defined for LID 4\n"},
	{"back to back", backToBack, ""},
}

// The fabric model read in the file's order finds what the script's
// reading of the file finds, record for record.
func TestModelReadsAsTheScriptReadsTheTopology(t *testing.T) {
	for _, tc := range scriptFindings {
		t.Run(tc.name, func(t *testing.T) {
			text, fromModel := topology(t, tc.fabric(t))
			fromText := readTopology(text)
			for i := range fromModel {
				fromModel[i].Node, fromModel[i].Port = nil, 0 // the text has no model
			}
			if !reflect.DeepEqual(fromModel, fromText) {
				t.Errorf("model's uses:\n%+v\ntext's uses:\n%+v\ntopology:\n%s", fromModel, fromText, text)
			}
			if got := scriptText(fromModel); got != tc.want {
				t.Errorf("findings:\n%s\nwant\n%s\ntopology:\n%s", got, tc.want, text)
			}
		})
	}
}

// infiniband-diags' own script, given the topology file of the same
// fabric, prints what ibtool finds in the model, and exits 1 when it
// finds something.
func TestModelFindsWhatTheScriptFinds(t *testing.T) {
	simfabric.RequireTools(t, "ibidsverify")
	for _, tc := range scriptFindings {
		t.Run(tc.name, func(t *testing.T) {
			text, fromModel := topology(t, tc.fabric(t))
			ca := fmt.Sprintf("ibtoolunit%d", os.Getpid())
			file := filepath.Join(IdsCacheDir, "ibnetdiscover-"+ca+"-1.topology")
			if err := os.MkdirAll(IdsCacheDir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(file, text, 0o644); err != nil {
				t.Fatal(err)
			}
			defer os.Remove(file)
			out, err := exec.Command("ibidsverify", "-C", ca, "-P", "1").Output()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			got := scriptText(fromModel)
			if got != string(out) || (code == 1) != (got != "") {
				t.Errorf("ibtool:\n%s\nibidsverify.pl (exit %d):\n%s\ntopology:\n%s", got, code, out, text)
			}
		})
	}
}
