package diagnose

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/query"
	"github.com/ibtool/ibtool/internal/routing"
	"github.com/ibtool/ibtool/internal/umad/umadtest"
)

// tablesSnapshot is a ring of 4 with every kind of table and read: LFTs
// (one block failed), SL2VL tables (one failed), MFTs (one block
// failed) and the SA's members of a group.
func tablesSnapshot() *Snapshot {
	s, sws := ring(4)
	setSL2VL(s, sws[:2], func(in, sl int) uint8 { return uint8(sl+in) % 4 })
	s.Tables.Switches[sws[1].GUID].SL2VL.Failed[routing.PortPair{In: 2, Out: 1}] = errTimeout
	delete(s.Tables.Switches[sws[1].GUID].SL2VL.Tables, routing.PortPair{In: 2, Out: 1})
	s.Tables.Switches[sws[3].GUID].LFT.Failed = []routing.BlockError{{Block: 0, Mod: 0, Err: errTimeout}}
	for i, n := range sws {
		m := &routing.MFT{First: routing.MinMLID, Chunks: 1, Masks: make([]uint16, 64)}
		m.Masks[0], m.Masks[33] = 1<<3|1<<1, uint16(0xA000+i)
		if i == 2 {
			m.Failed = []routing.BlockError{{Block: 1, Chunk: 0, Mod: 1, Err: errTimeout}}
		}
		s.Tables.Switches[n.GUID].MFT = m
	}
	host := sws[0].Port(3).Remote
	s.MCMembers = &MCMembers{Members: []MCMember{{MGID: mad.GID{0xff, 0x12, 15: 1}, MLID: 0xC000,
		PortGID: mad.GID{0xfe, 0x80, 8: byte(host.GUID >> 56), 15: byte(host.GUID)}, JoinState: 1}}}
	return s
}

// What Save keeps of the tables, Load gives back: the same tables, the
// same findings.
func TestSaveLoadTables(t *testing.T) {
	s := tablesSnapshot()
	cfg := &Config{}
	before, err := json.Marshal(Run(s, cfg, Checks()))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := Save(dir, s, cfg); err != nil {
		t.Fatal(err)
	}
	s2, _, after := loadJudged(t, dir, before)
	for guid, sw := range s.Tables.Switches {
		got := s2.Tables.Switches[guid]
		if got == nil {
			t.Fatalf("switch %x lost", guid)
		}
		if !reflect.DeepEqual(tablesOf(sw), tablesOf(got)) {
			t.Errorf("switch %x:\nsaved  %+v\nloaded %+v", guid, tablesOf(sw), tablesOf(got))
		}
	}
	if !reflect.DeepEqual(s.MCMembers.Members, s2.MCMembers.Members) || s2.MCMembers.Err != nil {
		t.Errorf("members %+v, loaded %+v", s.MCMembers, s2.MCMembers)
	}
	// The reads that failed are the walk's findings, before and after.
	if !strings.Contains(string(after), `"attribute":"SLtoVLMappingTable from port 2"`) ||
		!strings.Contains(string(after), `"attribute":"MulticastForwardingTable block 1 position 0"`) {
		t.Errorf("the failed reads are not reported:\n%s", after)
	}
}

// tablesOf is a switch's tables with errors as their texts, to compare.
func tablesOf(sw *routing.Switch) any {
	texts := func(bs []routing.BlockError) []string {
		var out []string
		for _, b := range bs {
			out = append(out, b.Err.Error())
			b.Err = nil
		}
		return out
	}
	type lft struct {
		First  int
		Ports  []byte
		Failed []string
	}
	type mft struct {
		First, Chunks int
		Masks         []uint16
		Failed        []string
	}
	out := struct {
		LFT    lft
		MFT    mft
		SL2VL  map[routing.PortPair][16]uint8
		Failed map[routing.PortPair]string
	}{LFT: lft{sw.LFT.First, sw.LFT.Ports, texts(sw.LFT.Failed)}}
	if m := sw.MFT; m != nil {
		out.MFT = mft{m.First, m.Chunks, m.Masks, texts(m.Failed)}
	}
	if sl := sw.SL2VL; sl != nil {
		out.SL2VL, out.Failed = sl.Tables, map[routing.PortPair]string{}
		for pp, err := range sl.Failed {
			out.Failed[pp] = err.Error()
		}
	}
	return out
}

func TestLoadRefusesBadTables(t *testing.T) {
	dir := t.TempDir()
	if err := Save(dir, tablesSnapshot(), &Config{}); err != nil {
		t.Fatal(err)
	}
	doc, _ := os.ReadFile(filepath.Join(dir, TablesFile))
	for _, tc := range []struct{ from, to, want string }{
		{`"version": 1`, `"version": 2`, "version 2"},
		{`"node_guid": "0x0000000000000101"`, `"node_guid": "0x0000000000001001"`, "no such switch"},
		{`"first_lid": 0`, `"first_lid": 3`, "not a block's first"},
		{`"vls": "`, `"vls": "x`, "not 16 hex digits"},
		{`"chunks": 1`, `"chunks": 3`, "ends before the switch's tables"},
		{`"lids": 64`, `"lids": 0`, "bytes more than"},
		{`"mlid": 49152`, `"mlid": 12`, "not a multicast LID"},
	} {
		bad := strings.Replace(string(doc), tc.from, tc.to, 1)
		if bad == string(doc) {
			t.Fatalf("%q not in %s", tc.from, TablesFile)
		}
		if err := os.WriteFile(filepath.Join(dir, TablesFile), []byte(bad), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, _, err := Load(dir); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.to, err, tc.want)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, TablesFile), doc, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, TableDataFile)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Load(dir); err == nil || !strings.Contains(err.Error(), TableDataFile) {
		t.Errorf("without %s: %v", TableDataFile, err)
	}
	// A directory saved before the tables were read: no tables, the
	// checks of the tables do not run.
	if err := os.Remove(filepath.Join(dir, TablesFile)); err != nil {
		t.Fatal(err)
	}
	s, _, err := Load(dir)
	if err != nil || s.Tables != nil {
		t.Fatalf("without %s: %v, tables %v", TablesFile, err, s.Tables)
	}
}

// umadRing is umadtest's ring of 4 switches (port 1 to the next one's
// port 2), a host on port 3 of each, every port operating VL0-3 and
// mapping SL s to VL s%4 from every input port. umadtest routes each
// LID along a shortest path, the lowest port among equals: the routes
// two hops away all go by port 1, a credit loop.
func umadRing() (*umadtest.Fabric, []*umadtest.Node) {
	f := umadtest.NewFabric()
	var sws []*umadtest.Node
	for i := range 4 {
		h := f.AddCA(0x1000+uint64(i)*0x10, 1, "host")
		sw := f.AddSwitch(0x100+uint64(i), 4, "sw")
		f.Link(h, 1, sw, 3)
		sws = append(sws, sw)
	}
	for i, sw := range sws {
		f.Link(sw, 1, sws[(i+1)%4], 2)
	}
	var vls mad.SLtoVLMappingTable
	for sl := range vls.VL {
		vls.VL[sl] = uint8(sl % 4)
	}
	for _, sw := range sws {
		for p := range 5 {
			pi := activePI(sw.LID(0), 1)
			pi.LocalPortNum, pi.OperationalVLs = uint8(p), 3
			// (Port 0's capability says it for the switch.)
			pi.CapabilityMask = uint32(mad.PortCapMaskSLMapping)
			if p == 4 { // no link
				pi.PortState, pi.PortPhysicalState = mad.PortStateDown, mad.PhysPortStatePolling
			}
			sw.Set(uint32(p), pi)
		}
		sw.Set(umadtest.AnyMod, &vls)
		sw.Join(0xC000, 1, 2, 3)
	}
	return f, sws
}

// The sweep reads every switch's LFT and, where the graph without VLs
// has loops, the SL2VL tables of those loops' ports: here the ring's
// port 1 of each switch, from each of its 5 input ports. With
// --multicast, the MFTs (and asks the SA, which this fabric lacks).
// Gets only.
func TestSweepReadsTheTables(t *testing.T) {
	f, sws := umadRing()
	c, port, _ := sweepClient(t, f)
	s, err := Sweep(context.Background(), c, &query.Source{}, SweepOptions{Multicast: true})
	if err != nil {
		t.Fatal(err)
	}
	if !s.Complete() || s.Tables == nil || len(s.Tables.Switches) != 4 {
		t.Fatalf("complete %v, tables %+v", s.Complete(), s.Tables)
	}
	sl2vl := 0
	for _, m := range port.Requests() {
		if m.Method() != mad.MethodGet {
			t.Errorf("the sweep sent %s(%s)", mad.MethodName(m.Class(), m.Method()), mad.AttrName(m.Class(), m.AttrID()))
		}
		if m.AttrID() == mad.AttrSLtoVLMappingTable {
			sl2vl++
			if out := m.AttrMod() & 0xFF; out != 1 {
				t.Errorf("SL2VL read for output port %d, which is in no loop", out)
			}
		}
	}
	if sl2vl != 4*5 {
		t.Errorf("%d SL2VL reads, want 20: port 1 of 4 switches from 5 input ports", sl2vl)
	}
	for _, sw := range sws {
		got := s.Tables.Switches[sw.GUID]
		if got.LFT == nil || got.MFT == nil || got.SL2VL == nil || len(got.SL2VL.Tables) != 5 {
			t.Fatalf("switch %x: %+v", sw.GUID, got)
		}
		if ps := got.MFT.Ports(0xC000); ps.Len() != 3 {
			t.Errorf("switch %x: MFT ports %v", sw.GUID, ps.Ports())
		}
	}
	if s.MCMembers == nil || s.MCMembers.Err == nil {
		t.Errorf("members %+v: this fabric has no SA", s.MCMembers)
	}
	rep := Run(s, &Config{}, Checks())
	var loops, mcastLoops []string
	for _, fd := range rep.Findings {
		switch fd.Code {
		case "credit_loops.loop":
			loops = append(loops, fd.Message)
		case "multicast.loop":
			mcastLoops = append(mcastLoops, fd.Message)
		}
	}
	// SL s on VL s%4 throughout: the ring's loop, once, on VLs 0-3. The
	// MFTs forward round the ring both ways: not a tree.
	if len(loops) != 1 || !strings.Contains(loops[0], "on VLs 0, 1, 2, 3, the same on each") || len(mcastLoops) != 1 {
		t.Errorf("credit loops %v, multicast loops %v", loops, mcastLoops)
	}
}
