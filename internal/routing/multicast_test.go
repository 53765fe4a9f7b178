package routing

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/ibtool/ibtool/internal/discovery"
)

// reached writes the end ports a tree reaches as "guid[port]", sorted.
func reached(tr Tree) string {
	var out []string
	for _, p := range tr.Reached {
		out = append(out, fmt.Sprintf("%x[%d]", p.Node.GUID, p.Num))
	}
	slices.Sort(out)
	return strings.Join(out, " ")
}

func TestMulticastTree(t *testing.T) {
	// Hosts 0x10000, 0x10010 on leaf 0x200 (ports 3, 4), 0x10020 and
	// 0x10030 on leaf 0x201; spines 0x100 and 0x101 (leaf ports 1, 2).
	fab, sp, lf := treeFabric(2, 2, 2)
	const mlid = 0xC005
	lf[0].Join(mlid, 1, 3, 4)
	lf[1].Join(mlid, 1, 3, 4)
	sp[0].Join(mlid, 1, 2)
	tb := readTables(t, fab, Want{MFT: true})
	if got := tb.MLIDs(); !slices.Equal(got, []int{mlid}) {
		t.Errorf("MLIDs in use: %x", got)
	}
	host := tb.Fabric.Node(0x10000)
	tr := tb.Multicast(host, 1, mlid)
	if got := reached(tr); got != "10010[1] 10020[1] 10030[1]" {
		t.Errorf("reached %s", got)
	}
	if len(tr.Loops) != 0 || len(tr.Stops) != 0 || len(tr.Switches) != 3 {
		t.Errorf("loops %v, stops %v, %d switches", tr.Loops, tr.Stops, len(tr.Switches))
	}
	if s := tr.Switches[0]; s.Node.GUID != 0x200 || s.In != 3 || !slices.Equal(s.Out, []int{1, 4}) {
		t.Errorf("first switch %x in %d out %v, want the leaf, in 3, out [1 4]", s.Node.GUID, s.In, s.Out)
	}
	// From the spine: both leaves, every host.
	tr = tb.Multicast(tb.Fabric.Node(sp[0].GUID), 0, mlid)
	if got := reached(tr); got != "10000[1] 10010[1] 10020[1] 10030[1]" {
		t.Errorf("from the spine: reached %s", got)
	}
	// An MLID nobody forwards goes nowhere.
	if tr := tb.Multicast(host, 1, mlid+1); len(tr.Reached) != 0 || len(tr.Switches) != 1 {
		t.Errorf("unused MLID: %+v", tr)
	}
}

func TestMulticastLoopsAndStops(t *testing.T) {
	fab, sp, lf := treeFabric(2, 2, 2)
	const mlid = 0xC000
	// Both spines in the group: two ways between the leaves.
	for _, l := range lf {
		l.Join(mlid, 1, 2, 3, 4)
	}
	for _, s := range sp {
		s.Join(mlid, 1, 2)
	}
	fab.Unlink(lf[1], 4) // 0x10030's link
	tb := readTables(t, fab, Want{MFT: true})
	tr := tb.Multicast(tb.Fabric.Node(0x10000), 1, mlid)
	// Both copies that come back: the second spine's to leaf 2, and leaf
	// 2's to the second spine.
	var loops []string
	for _, l := range tr.Loops {
		loops = append(loops, fmt.Sprintf("%x[%d]", l.Node.GUID, l.Port))
	}
	if !slices.Equal(loops, []string{"101[2]", "201[2]"}) {
		t.Errorf("loops %v", loops)
	}
	if len(tr.Stops) != 1 || tr.Stops[0].Node.GUID != lf[1].GUID || tr.Stops[0].Port != 4 || tr.Stops[0].End != PortDown {
		t.Errorf("stops %+v, want leaf 2's port 4, down", tr.Stops)
	}
	if got := reached(tr); got != "10010[1] 10020[1]" {
		t.Errorf("reached %s", got)
	}
	// A switch whose table was not read stops the tree there.
	delete(tb.Switches, sp[0].GUID)
	tr = tb.Multicast(tb.Fabric.Node(0x10000), 1, mlid)
	var unread []string
	for _, s := range tr.Stops {
		if s.End == Unread {
			unread = append(unread, fmt.Sprintf("%x", s.Node.GUID))
		}
	}
	if !slices.Equal(unread, []string{"100"}) {
		t.Errorf("unread: %v", unread)
	}
	// Port 0 in the entry: the switch itself is a member.
	tb.Switches[lf[0].GUID].MFT.Masks[0] |= 1
	tr = tb.Multicast(tb.Fabric.Node(0x10000), 1, mlid)
	if !slices.ContainsFunc(tr.Reached, func(p *discovery.Port) bool { return p.Node.GUID == lf[0].GUID && p.Num == 0 }) {
		t.Errorf("the leaf's port 0 is not reached: %s", reached(tr))
	}
}
