package routing

import (
	"context"
	"fmt"
	"sync"

	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/query"
)

// Target is a switch whose tables are read: how to reach it, its size
// and SwitchInfo, and, when not the whole table, which part to read.
type Target struct {
	GUID     uint64
	Dest     query.Dest
	NumPorts int
	Info     mad.SwitchInfo
	// InfoErr is set when the SwitchInfo could not be had: nothing is
	// read, and the switch carries the error.
	InfoErr error
	// Blocks are the LFT blocks to read, [First, End); zero for those
	// LinearFDBTop covers (DefaultBlocks).
	Blocks Range
	// MLIDs are the MLIDs to read, [First, End); zero for those
	// MulticastFDBCap and MulticastFDBTop cover (DefaultMLIDs).
	MLIDs Range
}

// Range is a half-open range of numbers [First, End).
type Range struct{ First, End int }

// Empty reports whether the range holds nothing.
func (r Range) Empty() bool { return r.End <= r.First }

// Want says which tables to read.
type Want struct{ LFT, MFT bool }

// DefaultBlocks are the LFT blocks a switch's LinearFDBTop covers: from
// block 0 to the one holding the top LID (none when the top is 0: the
// table is empty).
func DefaultBlocks(si *mad.SwitchInfo) Range {
	top := min(int(si.LinearFDBTop), MaxUnicastLID)
	if top == 0 {
		return Range{}
	}
	return Range{0, top/LIDsPerBlock + 1}
}

// DefaultMLIDs are the MLIDs a switch's MulticastFDBCap covers, up to
// MulticastFDBTop where that is set (0: the switch does not keep a top;
// a top below 0xBFFF is not valid and ignored, as the C tools do; 0xBFFF
// means no entry is in use).
func DefaultMLIDs(si *mad.SwitchInfo) Range {
	end := MinMLID + int(si.MulticastFDBCap)
	if top := int(si.MulticastFDBTop); top >= MinMLID-1 {
		end = min(end, top+1)
	}
	return Range{MinMLID, min(end, MaxMLID+1)}
}

// Targets are the fabric's switches as the walk found them, reached by
// the walk's directed route (a cache has none: by LID), in node GUID
// order.
func Targets(f *discovery.Fabric) []Target {
	var ts []Target
	for _, n := range f.SortedByGUID() {
		if n.Type != discovery.NodeSwitch {
			continue
		}
		t := Target{GUID: n.GUID, Dest: DestOf(n), NumPorts: n.NumPorts}
		if err := t.Info.Unmarshal(n.SwitchInfo); err != nil {
			t.InfoErr = fmt.Errorf("no SwitchInfo from the walk: %w", err)
		}
		ts = append(ts, t)
	}
	return ts
}

// DestOf is how a node is reached: the walk's directed route, or its
// LID when it has none (a fabric from a cache).
func DestOf(n *discovery.Node) query.Dest {
	if len(n.DRPath) > 0 {
		return query.DR(n.DRPath)
	}
	if n.Type == discovery.NodeSwitch {
		return query.LID(n.SMALID)
	}
	for _, p := range n.Ports {
		if p != nil && p.BaseLID != 0 {
			return query.LID(p.BaseLID)
		}
	}
	return query.LID(0)
}

// Read reads the tables of every switch of f through c: every block of
// every switch in flight at once, within the engine's windows.
func Read(ctx context.Context, c *query.Client, f *discovery.Fabric, want Want) *Tables {
	t := &Tables{Fabric: f, Switches: map[uint64]*Switch{}}
	for _, sw := range ReadSwitches(ctx, c, Targets(f), want) {
		t.Switches[sw.GUID] = sw
	}
	return t
}

// ReadSwitches reads the tables of the targets, in their order: the LFT
// and the MFT blocks of all of them through one fan-out each, run side
// by side. A block that fails is its switch's alone: recorded in its
// table's Failed, the rest kept.
func ReadSwitches(ctx context.Context, c *query.Client, targets []Target, want Want) []*Switch {
	switches := make([]*Switch, len(targets))
	for i := range targets {
		t := &targets[i]
		switches[i] = &Switch{GUID: t.GUID, NumPorts: t.NumPorts, Info: t.Info, Err: t.InfoErr}
	}
	var wg sync.WaitGroup
	if want.LFT {
		wg.Go(func() { readLFTs(ctx, c, targets, switches) })
	}
	if want.MFT {
		wg.Go(func() { readMFTs(ctx, c, targets, switches) })
	}
	wg.Wait()
	return switches
}

func readLFTs(ctx context.Context, c *query.Client, targets []Target, switches []*Switch) {
	groups := make([][]query.Job, len(targets))
	ranges := make([]Range, len(targets))
	for i := range targets {
		t := &targets[i]
		if t.InfoErr != nil {
			continue
		}
		r := t.Blocks
		if r == (Range{}) {
			r = DefaultBlocks(&t.Info)
		}
		ranges[i] = r
		if !r.Empty() {
			groups[i] = query.LFTJobs(t.Dest, r.First, r.End-1)
		}
	}
	res := query.FanOutGroups[mad.LinearForwardingTable](ctx, c, groups)
	for i, sw := range switches {
		if targets[i].InfoErr != nil {
			continue
		}
		sw.LFT = lftOf(ranges[i], groups[i], res[i])
	}
}

// lftOf lays the blocks read out as a table.
func lftOf(r Range, jobs []query.Job, res []query.Result[mad.LinearForwardingTable]) *LFT {
	t := &LFT{First: r.First * LIDsPerBlock, Ports: make([]byte, 0, max(r.End-r.First, 0)*LIDsPerBlock)}
	for k, got := range res {
		if got.Err != nil {
			t.Failed = append(t.Failed, BlockError{Block: int(jobs[k].Mod), Mod: jobs[k].Mod, Err: got.Err})
			for range LIDsPerBlock {
				t.Ports = append(t.Ports, NoPort)
			}
			continue
		}
		t.Ports = append(t.Ports, got.Value.Port[:]...)
	}
	return t
}

func readMFTs(ctx context.Context, c *query.Client, targets []Target, switches []*Switch) {
	groups := make([][]query.Job, len(targets))
	ranges := make([]Range, len(targets))
	for i := range targets {
		t := &targets[i]
		if t.InfoErr != nil {
			continue
		}
		r := t.MLIDs
		if r == (Range{}) {
			r = DefaultMLIDs(&t.Info)
		}
		ranges[i] = r
		if !r.Empty() {
			groups[i] = query.MFTJobs(t.Dest, r.First, r.End-1, t.NumPorts)
		}
	}
	res := query.FanOutGroups[mad.MulticastForwardingTable](ctx, c, groups)
	for i, sw := range switches {
		if targets[i].InfoErr != nil {
			continue
		}
		sw.MFT = mftOf(ranges[i], targets[i].NumPorts, groups[i], res[i])
	}
}

// mftOf lays the blocks read out as a table covering MLIDs r.
func mftOf(r Range, nports int, jobs []query.Job, res []query.Result[mad.MulticastForwardingTable]) *MFT {
	chunks := query.MFTChunks(nports)
	m := &MFT{First: r.First, Chunks: chunks, Masks: make([]uint16, max(r.End-r.First, 0)*chunks)}
	for k, got := range res {
		mod := jobs[k].Mod
		block, chunk := int(mod&0x1FF), int(mod>>28)
		if got.Err != nil {
			m.Failed = append(m.Failed, BlockError{Block: block, Chunk: chunk, Mod: mod, Err: got.Err})
			continue
		}
		for i, mask := range got.Value.PortMask {
			mlid := MinMLID + block*MLIDsPerBlock + i
			if mlid >= r.First && mlid < r.End {
				m.Masks[(mlid-r.First)*chunks+chunk] = mask
			}
		}
	}
	return m
}

// ReadSL2VL reads, for each given switch port, its SLtoVLMappingTables
// from every input port (IBA 14.2.5.8: the modifier is the input port in
// bits 15..8, the output port in bits 7..0), all at once, into t's
// switches. Only switches matter: a CA port's table maps the VLs of its
// injection channel, which no credit loop goes through. Ports of nodes
// that are not switches of t are skipped.
func ReadSL2VL(ctx context.Context, c *query.Client, t *Tables, ports []*discovery.Port) {
	type read struct {
		sw   *Switch
		pair PortPair
	}
	var jobs []query.Job
	var reads []read
	for _, p := range ports {
		n := p.Node
		sw := t.Switches[n.GUID]
		if n.Type != discovery.NodeSwitch || sw == nil || p.Num == 0 {
			continue
		}
		d := DestOf(n)
		for in := 0; in <= n.NumPorts; in++ {
			jobs = append(jobs, query.Job{Dest: d, Mod: uint32(in)<<8 | uint32(p.Num)})
			reads = append(reads, read{sw, PortPair{uint8(in), uint8(p.Num)}})
		}
	}
	res := query.FanOut[mad.SLtoVLMappingTable](ctx, c, jobs)
	for k, r := range reads {
		s := r.sw.SL2VL
		if s == nil {
			s = &SL2VL{Tables: map[PortPair][16]uint8{}, Failed: map[PortPair]error{}}
			r.sw.SL2VL = s
		}
		if res[k].Err != nil {
			s.Failed[r.pair] = res[k].Err
			continue
		}
		s.Tables[r.pair] = res[k].Value.VL
	}
}
