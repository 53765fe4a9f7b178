package health

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/endport"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/query"
	"github.com/ibtool/ibtool/internal/rpc"
	"github.com/ibtool/ibtool/internal/umad/umadtest"
)

// caPort is port 1 of a CA, Active at 4X QDR with LID 5 and an SM.
func caPort() *Port {
	return &Port{
		Node: &mad.NodeInfo{NodeType: mad.NodeTypeCA, NumPorts: 1},
		Num:  1,
		Info: &mad.PortInfo{PortPhysicalState: mad.PhysPortStateLinkUp, PortState: mad.PortStateActive, LID: 5, MasterSMLID: 1, LocalPortNum: 1,
			LinkWidthSupported: 0x3, LinkWidthActive: mad.LinkWidth4X, LinkSpeedSupported: 7, LinkSpeedActive: mad.LinkSpeedQDR},
		EndLID: 5,
	}
}

func TestPortChecks(t *testing.T) {
	all := []Check{PortState, PortWidth, PortLink}
	if fs := Run(caPort(), all...); len(fs) != 0 {
		t.Errorf("a healthy port: %+v", fs)
	}

	p := caPort()
	p.Info.PortState = mad.PortStateInit
	p.Info.LinkWidthActive = mad.LinkWidth1X
	p.Info.LID, p.Info.LocalPortNum = 0, 2
	p.Peer = &mad.PortInfo{LinkWidthSupported: 0x1, LinkSpeedSupported: 3}
	want := []Finding{
		{Field: "PortState", Got: uint64(mad.PortStateInit), Want: uint64(mad.PortStateActive)},
		// The peer does 1X only and DDR at most: the width is right, the
		// speed is not.
		{Field: "LinkSpeedActive", Got: uint64(mad.LinkSpeedQDR), Want: uint64(mad.LinkSpeedDDR)},
		{Field: "LID", Rule: NonZero},
		{Field: "LocalPortNum", Got: 2, Want: 1},
	}
	if fs := Run(p, all...); !reflect.DeepEqual(fs, want) {
		t.Errorf("findings %+v, want %+v", fs, want)
	}

	// A link that is not up fails the port; the other checks are not run.
	p.Info.PortPhysicalState = mad.PhysPortStatePolling
	want = []Finding{{Field: "PortPhysicalState", Got: uint64(mad.PhysPortStatePolling), Want: uint64(mad.PhysPortStateLinkUp), Fatal: true}}
	if fs := Run(p, all...); !reflect.DeepEqual(fs, want) {
		t.Errorf("link down: %+v", fs)
	}

	// A switch's port 0 has no link; its external ports no LID or SM.
	sw := &mad.NodeInfo{NodeType: mad.NodeTypeSwitch, NumPorts: 8}
	p0 := &Port{Node: sw, Num: 0, Info: &mad.PortInfo{PortPhysicalState: mad.PhysPortStateLinkUp, PortState: mad.PortStateActive, LID: 2}}
	want = []Finding{{Field: "MasterSMLID", Rule: NonZero}}
	if fs := Run(p0, all...); !reflect.DeepEqual(fs, want) {
		t.Errorf("switch port 0: %+v, want %+v", fs, want)
	}
	p3 := &Port{Node: sw, Num: 3, Info: &mad.PortInfo{PortPhysicalState: mad.PhysPortStateLinkUp, PortState: mad.PortStateActive,
		LinkWidthSupported: 0x3, LinkWidthActive: mad.LinkWidth4X, LinkSpeedSupported: 1, LinkSpeedActive: mad.LinkSpeedSDR}}
	if fs := Run(p3, all...); len(fs) != 0 {
		t.Errorf("switch port 3: %+v", fs)
	}
}

// checkFabric is a host and two CAs on a switch, with an SA that has no
// path to ca3 and puts ca2's port at ca3's LID.
func checkFabric(t *testing.T) (*query.Client, *umadtest.Fabric, []*umadtest.Node) {
	t.Helper()
	fab := umadtest.NewFabric()
	host := fab.AddCA(0x100, 1, "host")
	sw := fab.AddSwitch(0x200, 8, "sw")
	ca2 := fab.AddCA(0x300, 1, "ca2")
	ca3 := fab.AddCA(0x400, 1, "ca3")
	fab.Link(host, 1, sw, 1)
	fab.Link(ca2, 1, sw, 2)
	fab.Link(ca3, 1, sw, 3)
	fab.SMLID = host.LID(1)
	sgid := mad.GID(endport.GIDFromGUID(host.PortGUID(1)))
	path := func(n *umadtest.Node, port int, dlid uint16) *mad.PathRecord {
		return &mad.PathRecord{SGID: sgid, DGID: mad.GID(endport.GIDFromGUID(n.PortGUID(port))), DLID: dlid, Reversible: 1, NumbPath: 1}
	}
	node := func(n *umadtest.Node, lid uint16, portGUID uint64) *mad.NodeRecord {
		r := &mad.NodeRecord{LID: lid}
		r.NodeInfo.PortGUID = mad.GUID(portGUID)
		return r
	}
	sa := umadtest.NewSA()
	sa.Add(path(host, 1, host.LID(1)), path(sw, 0, sw.LID(0)), path(ca2, 1, ca3.LID(1)))
	sa.Add(node(sw, sw.LID(0), 0x999), node(ca2, ca2.LID(1), ca2.PortGUID(1)))
	tr := umadtest.NewOpener(umadtest.Classes{
		mad.ClassSubnLID: fab.Answer, mad.ClassSubnDR: fab.Answer, mad.ClassSubnAdm: sa.Answer,
	}.Answer, umadtest.WithInfo(fab.LocalInfo()))
	port, err := tr.Open("", -1)
	if err != nil {
		t.Fatal(err)
	}
	eng := rpc.New(port, rpc.Options{Timeout: 50 * time.Millisecond, Retries: 1})
	t.Cleanup(func() { eng.Close() })
	return query.New(eng, query.Options{}), fab, []*umadtest.Node{host, sw, ca2, ca3}
}

func TestReadPortAndNodeSA(t *testing.T) {
	c, _, nodes := checkFabric(t)
	ctx := context.Background()
	sw, ca2, ca3 := nodes[1], nodes[2], nodes[3]

	// A switch's external port: its LID is port 0's.
	p, err := ReadPort(ctx, c, query.LID(sw.LID(0)), 2, true)
	if err != nil || p.Num != 2 || p.EndLID != sw.LID(0) || p.Desc != "sw" || p.GUID != sw.PortGUID(0) {
		t.Fatalf("switch port 2: %+v %v", p, err)
	}
	// Not on a port: the one the SMPs arrive on.
	p, err = ReadPort(ctx, c, query.LID(ca2.LID(1)), 0, false)
	if err != nil || p.Num != 1 || p.EndLID != ca2.LID(1) || p.GUID != ca2.PortGUID(1) {
		t.Fatalf("ca2: %+v %v", p, err)
	}

	// ca2: the SA's path ends at ca3's LID; its NodeRecord agrees.
	f, err := CheckNodeSA(ctx, c, p, false, true)
	want := &NodeFinding{Problem: PathElsewhere, PortGUID: ca2.PortGUID(1), PortLID: ca2.LID(1), SALID: ca3.LID(1)}
	if err != nil || !reflect.DeepEqual(f, want) {
		t.Errorf("ca2: %+v %v, want %+v", f, err, want)
	}
	// ca3: no path. (Without full, no NodeRecord is asked.)
	p3, _ := ReadPort(ctx, c, query.LID(ca3.LID(1)), 0, false)
	f, err = CheckNodeSA(ctx, c, p3, false, false)
	if err != nil || f == nil || f.Problem != NoPath || f.PortGUID != ca3.PortGUID(1) {
		t.Errorf("ca3: %+v %v", f, err)
	}
	// sw: the SA's NodeRecord has another port GUID.
	p0, _ := ReadPort(ctx, c, query.LID(sw.LID(0)), 0, false)
	f, err = CheckNodeSA(ctx, c, p0, false, true)
	if err != nil || f == nil || f.Problem != GUIDDiffers || f.SAGUID != 0x999 {
		t.Errorf("sw: %+v %v", f, err)
	}
	if f, err := CheckNodeSA(ctx, c, p0, false, false); err != nil || f != nil {
		t.Errorf("sw without the NodeRecord: %+v %v", f, err)
	}
	// ca3 has no NodeRecord: the check could not be done.
	if _, err := CheckNodeSA(ctx, c, p3, false, true); err == nil || errors.Is(err, ErrNoSA) {
		t.Errorf("ca3's NodeRecord: %v", err)
	}
	if _, err := ReadPort(ctx, c, query.LID(60), 0, false); err == nil {
		t.Error("a LID nobody has")
	}
}

// The fabric's end ports and the ports their checks look at.
func TestEndPorts(t *testing.T) {
	c, _, nodes := checkFabric(t)
	f, err := discovery.Discover(context.Background(), c.Engine(), discovery.Options{})
	if err != nil {
		t.Fatal(err)
	}
	eps := EndPorts(f)
	if len(eps) != 4 {
		t.Fatalf("%d end ports, want 4", len(eps))
	}
	for _, ep := range eps {
		linked := ep.LinkedPorts()
		if ep.Node.Type == discovery.NodeSwitch {
			// Port 0 and the three with a link, not the four without.
			if len(linked) != 4 || linked[0].Num != 0 {
				t.Errorf("switch: %d ports", len(linked))
			}
			p := ep.PortOf(linked[2])
			if p.Num != 2 || p.EndLID != nodes[1].LID(0) || p.Peer == nil || p.Desc != "sw" {
				t.Errorf("switch port 2: %+v", p)
			}
			continue
		}
		if len(linked) != 1 || linked[0] != ep.Port {
			t.Errorf("CA: %v", linked)
		}
	}
}
