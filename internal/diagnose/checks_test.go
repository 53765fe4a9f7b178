package diagnose

import (
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/mad"
)

// at tells whether a finding is at node guid, port num.
func at(f Finding, guid uint64, num int) bool {
	return f.At != nil && f.At.NodeGUID == guid && f.At.Port == num
}

func TestCleanFabricHasNoFindings(t *testing.T) {
	tn := routed()                // with tables (routingcheck_test.go)
	tn.s.MCMembers = &MCMembers{} // and --multicast's reads, no group
	for _, c := range Checks() {
		if c.Name() == "topology" || c.Name() == "pkeys" {
			continue // needs --expect; no port enforces partitions
		}
		if got := codes(run(t, c, tn.s, nil)); len(got) != 0 {
			t.Errorf("%s on a clean fabric: %v", c.Name(), got)
		}
	}
	if _, skipped := (topologyCheck{}).Run(tn.s, &Config{}); skipped == "" {
		t.Error("topology ran without an expected fabric")
	}
}

func TestWalkCheck(t *testing.T) {
	tn := newTiny()
	tn.s.Fabric.Errors = []*discovery.WalkError{
		{DRPath: []byte{0, 1, 7}, What: "NodeInfo", Err: errTimeout},
		{DRPath: []byte{0, 1, 5}, What: "PortInfo port 3", Err: errTimeout},
		{DRPath: []byte{0, 1, 5}, What: "NodeDescription", Err: errTimeout},
	}
	tn.s.SMInfo[0].Err = errTimeout
	tn.s.Loss = []DestLoss{
		{Dest: "DR path 0,1,5", Attempts: 20, NoReply: 3, Replies: 17}, // sw2, behind sw1 port 5
		{Dest: "DR path 0,1,5,1", Attempts: 6, NoReply: 2, Replies: 4}, // host2, behind it too
		{Dest: "DR path 0,1,7", Attempts: 4, NoReply: 4},               // never answered: a walk error
		{Dest: "LID 5", Attempts: 10, NoReply: 1, Replies: 9},          // one lost: no pattern
		{Dest: "DR path 0,1,6,1", Attempts: 8, NoReply: 2, Replies: 6}, // host2 by the other link
	}
	found := run(t, walkCheck{}, tn.s, nil)
	want := []struct {
		code string
		node uint64
		port int
	}{
		{"walk.no_answer", 0x200, 7},
		{"walk.attribute_unread", 0x300, 3},
		{"walk.attribute_unread", 0x300, NoPort},
		{"walk.read_failed", 0x100, 1},
		{"walk.mads_lost", 0x200, 5},
		{"walk.mads_lost", 0x300, 1}, // the route's other links lost nothing: its last
	}
	if len(found) != len(want) {
		t.Fatalf("%d findings, want %d: %+v", len(found), len(want), found)
	}
	for i, w := range want {
		if found[i].Code != w.code || !at(found[i], w.node, w.port) {
			t.Errorf("finding %d: %s at %+v, want %s at 0x%x port %d", i, found[i].Code, found[i].At, w.code, w.node, w.port)
		}
	}
	if got := found[4]; got.Get("lost_attempts") != 5 || got.Get("attempts") != 26 || got.Get("destinations") != 2 || got.Get("dr_path") != "0,1,5" {
		t.Errorf("the loss behind sw1 port 5: %+v", got.Evidence)
	}
	if got := found[0]; got.Get("dr_path") != "0,1,7" || got.Remote != nil {
		t.Errorf("no answer beyond an unlinked port: %+v", got)
	}
}

func TestSMCheck(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fault func(tn *tiny)
		want  []string
	}{
		{"no SM", func(tn *tiny) { tn.s.SMInfo = nil }, []string{"sm.no_sm"}},
		{"standby only", func(tn *tiny) { tn.s.SMInfo[0].Info.SMState = 2 }, []string{"sm.no_master"}},
		{"SMInfo not read", func(tn *tiny) { tn.s.SMInfo[0].Err = errTimeout }, nil},
		{"two masters", func(tn *tiny) {
			p := tn.hst.Port(1)
			tn.s.SMInfo = append(tn.s.SMInfo, SMInfoRead{Port: p, Info: mad.SMInfo{GUID: 0x401, SMState: mad.SMStateMaster}})
		}, []string{"sm.multiple_masters", "sm.multiple_masters"}},
		{"a port with another SM LID", func(tn *tiny) {
			setPI(tn.sw2.Port(0), func(pi *mad.PortInfo) { pi.MasterSMLID = 9 })
			setPI(tn.sw2.Port(3), func(pi *mad.PortInfo) { pi.MasterSMLID = 9 }) // not an end port
		}, []string{"sm.sm_lid_mismatch"}},
		{"another subnet prefix", func(tn *tiny) {
			setPI(tn.hst.Port(1), func(pi *mad.PortInfo) { pi.GIDPrefix = 0xfe80_0000_0000_0001 })
		}, []string{"sm.subnet_prefix_mismatch"}},
		{"another prefix without a master", func(tn *tiny) {
			tn.s.SMInfo[0].Info.SMState = 2
			setPI(tn.hst.Port(1), func(pi *mad.PortInfo) { pi.GIDPrefix = 0xfe80_0000_0000_0001 })
		}, []string{"sm.no_master", "sm.subnet_prefix_mismatch"}},
	} {
		tn := newTiny()
		tc.fault(tn)
		found := run(t, smCheck{}, tn.s, nil)
		if got := codes(found); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	tn := newTiny()
	setPI(tn.sw2.Port(0), func(pi *mad.PortInfo) { pi.MasterSMLID = 9 })
	found := run(t, smCheck{}, tn.s, nil)
	if len(found) != 2 || found[0].Code != "sm.sm" || !at(found[0], 0x100, 1) || found[0].Get("sm_state_text") != "SMINFO_MASTER" ||
		!at(found[1], 0x300, 0) || found[1].Get("sm_lid") != uint16(9) || found[1].Get("master_lid") != uint16(1) {
		t.Errorf("findings %+v", found)
	}
}

func TestNodesCheck(t *testing.T) {
	tn := newTiny()
	for _, n := range []*discovery.Node{tn.sw1, tn.sw2, tn.hst} {
		setNI(n, func(ni *mad.NodeInfo) { ni.VendorID, ni.DeviceID, ni.Revision = 0x2c9, 0xcb20, 3 })
	}
	setNI(tn.sw1, func(ni *mad.NodeInfo) { ni.Revision = 0 }) // 0 is a revision too
	setNI(tn.hst, func(ni *mad.NodeInfo) { ni.Revision = 1 }) // a CA: another kind
	found := run(t, nodesCheck{}, tn.s, nil)
	if len(found) != 1 || found[0].Code != "nodes.mixed_revision" || !at(found[0], 0x200, NoPort) ||
		found[0].Get("newest_revision") != uint32(3) || found[0].Get("nodes_at_newest") != 1 || found[0].Get("nodes_of_kind") != 2 {
		t.Errorf("findings %+v", found)
	}
}

func TestLinksCheck(t *testing.T) {
	type place struct {
		code string
		node uint64
		port int
	}
	for _, tc := range []struct {
		name  string
		fault func(tn *tiny)
		cfg   Config
		want  []place
	}{
		{"Init and Armed", func(tn *tiny) {
			setPI(tn.sw2.Port(1), func(pi *mad.PortInfo) { pi.PortState = mad.PortStateInit })
			setPI(tn.hst.Port(1), func(pi *mad.PortInfo) { pi.PortState = mad.PortStateArmed })
		}, Config{}, []place{{"links.port_armed", 0x400, 1}, {"links.port_init", 0x300, 1}}},
		{"ends disagree", func(tn *tiny) {
			setPI(tn.sw1.Port(5), func(pi *mad.PortInfo) { pi.LinkWidthActive = mad.LinkWidth1X })
		}, Config{}, []place{{"links.ends_disagree", 0x200, 5}}},
		{"MTU", func(tn *tiny) {
			setPI(tn.host1.Port(1), func(pi *mad.PortInfo) { pi.NeighborMTU = 3 })
		}, Config{}, []place{{"links.mtu_below_capability", 0x100, 1}}},
		{"MTU capped by one end", func(tn *tiny) {
			setPI(tn.host1.Port(1), func(pi *mad.PortInfo) { pi.NeighborMTU, pi.MTUCap = 3, 3 })
			setPI(tn.sw1.Port(1), func(pi *mad.PortInfo) { pi.NeighborMTU = 3 })
		}, Config{}, nil},
		{"VLs", func(tn *tiny) {
			setPI(tn.sw2.Port(6), func(pi *mad.PortInfo) { pi.OperationalVLs = 2 })
		}, Config{}, []place{{"links.vls_below_capability", 0x200, 6}}},
		{"expected width", func(tn *tiny) {
			for _, p := range []*discovery.Port{tn.sw1.Port(5), tn.sw2.Port(5)} {
				setPI(p, func(pi *mad.PortInfo) { pi.LinkWidthActive = mad.LinkWidth1X })
			}
		}, Config{ExpectWidth: "4X"}, []place{{"links.below_expected_width", 0x200, 5}}},
		{"expected speed", func(*tiny) {}, Config{ExpectSpeed: "SDR"}, nil},
		{"expected faster", func(*tiny) {}, Config{ExpectSpeed: "QDR"}, []place{
			{"links.below_expected_speed", 0x100, 1}, {"links.below_expected_speed", 0x200, 5},
			{"links.below_expected_speed", 0x200, 6}, {"links.below_expected_speed", 0x400, 1}}},
	} {
		tn := newTiny()
		tc.fault(tn)
		cfg := tc.cfg
		r := Run(tn.s, &cfg, []Check{linksCheck{}})
		var got []place
		for _, f := range r.Findings {
			got = append(got, place{f.Code, f.At.NodeGUID, f.At.Port})
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
		if err := CheckCodes(linksCheck{}, deref(r.Findings)); err != nil {
			t.Error(err)
		}
	}
}

func deref(fs []*Finding) []Finding {
	out := make([]Finding, len(fs))
	for i, f := range fs {
		out[i] = *f
	}
	return out
}

func TestTopologyCheck(t *testing.T) {
	type place struct {
		code string
		node uint64
		port int
	}
	for _, tc := range []struct {
		name   string
		change func(tn *tiny)
		want   []place
	}{
		{"same", func(*tiny) {}, nil},
		{"a link unplugged", func(tn *tiny) {
			p := tn.sw1.Port(6)
			p.Remote.Remote, p.Remote = nil, nil
		}, []place{{"topology.link_missing", 0x200, 6}}},
		{"a host moved", func(tn *tiny) {
			p := tn.hst.Port(1)
			p.Remote.Remote = nil
			discovery.Link(p, tn.sw2.Port(3))
		}, []place{{"topology.link_moved", 0x400, 1}}},
		{"a host gone", func(tn *tiny) {
			tn.s.Fabric = newBuilderWithout(0x400)
		}, []place{{"topology.node_missing", 0x400, NoPort}}},
		{"a link slower", func(tn *tiny) {
			for _, p := range []*discovery.Port{tn.sw1.Port(5), tn.sw2.Port(5)} {
				setPI(p, func(pi *mad.PortInfo) { pi.LinkWidthActive = mad.LinkWidth1X })
			}
		}, []place{{"topology.link_degraded", 0x200, 5}}},
		{"a link faster", func(tn *tiny) {
			for _, p := range []*discovery.Port{tn.sw1.Port(5), tn.sw2.Port(5)} {
				setPI(p, func(pi *mad.PortInfo) { pi.LinkSpeedActive = mad.LinkSpeedQDR })
			}
		}, []place{{"topology.rate_changed", 0x200, 5}}},
		{"a new link", func(tn *tiny) {
			discovery.Link(tn.sw1.Port(7), tn.sw2.Port(7))
		}, []place{{"topology.link_extra", 0x200, 7}}},
	} {
		ref := newTiny()
		tn := newTiny()
		tc.change(tn)
		cfg := &Config{Expected: &Expected{Kind: "cache", Fabric: ref.s.Fabric}}
		r := Run(tn.s, cfg, []Check{topologyCheck{}})
		var got []place
		for _, f := range r.Findings {
			got = append(got, place{f.Code, f.At.NodeGUID, f.At.Port})
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
		if err := CheckCodes(topologyCheck{}, deref(r.Findings)); err != nil {
			t.Error(err)
		}
	}
}

// newBuilderWithout is tiny's fabric without one node.
func newBuilderWithout(guid uint64) *discovery.Fabric {
	tn := newTiny()
	f := discovery.NewFabric()
	for _, n := range tn.s.Fabric.Nodes {
		if n.GUID == guid {
			for _, p := range n.Ports {
				if p != nil && p.Remote != nil {
					p.Remote.Remote = nil
				}
			}
			continue
		}
		f.AddNode(n)
	}
	f.From = tn.host1
	return f
}

// docs/diagnose.md lists every code with its severity.
func TestDocsListEveryCode(t *testing.T) {
	doc, err := os.ReadFile("../../docs/diagnose.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range Checks() {
		for _, ci := range c.Codes() {
			if row := "| `" + ci.Code + "` | " + ci.Severity.String() + " |"; !strings.Contains(string(doc), row) {
				t.Errorf("docs/diagnose.md has no row %q", row)
			}
		}
	}
}
