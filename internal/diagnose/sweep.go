package diagnose

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/query"
)

// SweepOptions tune a sweep.
type SweepOptions struct {
	// Walk tunes the walk (progress, what it reports as it goes).
	Walk query.Walk
	// Loss, when set, is the recorder on the client's engine
	// (LossRecorder.Trace as its trace hook): its counts go into the
	// snapshot.
	Loss *LossRecorder
	// Interval is the time between the two counter reads (--interval);
	// 0 reads them once.
	Interval time.Duration
	// Multicast reads the MFTs and the SA's multicast members too.
	Multicast bool
}

// Sweep reads everything the checks need: the fabric from src (a walk,
// the SA's records or a cache), then, all at once through the query
// layer's fan-outs, the SMInfo of every SM port, the P_Key tables
// where partitions are enforced, the counters of both ends of every link
// (twice, opts.Interval apart: the other reads go on meanwhile), what
// is behind switch ports that are up but the walk left without a link,
// and the switches' forwarding tables (with opts.Multicast the MFTs and
// the SA's multicast members too). It sends Gets only: a diagnosis never
// changes the fabric, its counters included.
//
// The error is the fabric's: without one there is nothing to judge. A
// read that fails afterwards is the snapshot's (its Err), and the sweep
// goes on.
//
// The walk goes by directed route unless told otherwise (--discovery):
// a diagnosis must not depend on the forwarding tables it may find
// broken, and a MAD lost on a directed route names the links it crossed.
func Sweep(ctx context.Context, c *query.Client, src *query.Source, opts SweepOptions) (*Snapshot, error) {
	if src.Discovery == "" && !src.SA {
		dr := *src
		dr.Discovery = "DR"
		src = &dr
	}
	f, err := src.Fabric(ctx, c, opts.Walk)
	if err != nil {
		return nil, err
	}
	s := &Snapshot{Source: sourceName(src), Fabric: f}
	var wg sync.WaitGroup
	wg.Go(func() { s.SMInfo = readSMInfo(ctx, c, f) })
	wg.Go(func() { s.PKeys = readPKeys(ctx, c, f) })
	wg.Go(func() { s.Counters = readCounters(ctx, c, f, opts.Interval) })
	wg.Go(func() { s.Hidden = readHidden(ctx, c, f) })
	wg.Go(func() { s.Tables = readTables(ctx, c, f, opts.Multicast) })
	if opts.Multicast {
		wg.Go(func() { s.MCMembers = readMCMembers(ctx, c) })
	}
	wg.Wait()
	if opts.Loss != nil {
		s.Loss = opts.Loss.Losses()
	}
	s.MADs = c.Engine().Stats()
	return s, nil
}

func sourceName(src *query.Source) string {
	if src.LoadCache != "" {
		return "cache"
	}
	if _, sa, _ := src.Mode(); sa {
		return "sa"
	}
	return "walk"
}

// sortedPorts are the fabric's ports in node GUID and port order, those
// keep(p) wants.
func sortedPorts(f *discovery.Fabric, keep func(*discovery.Port) bool) []*discovery.Port {
	var out []*discovery.Port
	for _, n := range f.SortedByGUID() {
		for _, p := range n.Ports {
			if p != nil && keep(p) {
				out = append(out, p)
			}
		}
	}
	return out
}

// isSMPort tells whether p's PortInfo says a subnet manager runs there
// (CapabilityMask IsSM, IBA 14.2.5.6).
func isSMPort(p *discovery.Port) bool {
	return len(p.PortInfo) > 0 && p.Info().CapabilityMask&uint32(mad.PortCapMaskSM) != 0
}

// errNoRoute is the error of a port no SMP can be addressed to: no
// directed route known and no LID.
var errNoRoute = errors.New("no directed route and no LID to reach the port by")

// portDest is how an SMP reaches port p itself (a CA's SMA answers for
// the port the SMP arrives on): a switch by its walk's directed route; a
// CA or router port by the route to the switch port it is linked to,
// one hop more; else by LID (a fabric from a cache or the SA has no
// routes).
func portDest(f *discovery.Fabric, p *discovery.Port) (query.Dest, bool) {
	n := p.Node
	if n.Type == discovery.NodeSwitch {
		if len(n.DRPath) > 0 {
			return query.DR(n.DRPath), true
		}
		return query.LID(n.SMALID), n.SMALID != 0
	}
	if n == f.From && p.Num == f.FromPort && len(n.DRPath) > 0 {
		return query.DR(n.DRPath), true // the local port: no hop
	}
	if r := p.Remote; r != nil && r.Node.Type == discovery.NodeSwitch && len(r.Node.DRPath) > 0 && len(r.Node.DRPath) < mad.MaxDRHops {
		path := append(append([]byte(nil), r.Node.DRPath...), byte(r.Num))
		return query.DR(path), true
	}
	return query.LID(p.BaseLID), p.BaseLID != 0
}

// readSMInfo reads the SMInfo of every SM port.
func readSMInfo(ctx context.Context, c *query.Client, f *discovery.Fabric) []SMInfoRead {
	ports := sortedPorts(f, isSMPort)
	reads := make([]SMInfoRead, len(ports))
	var jobs []query.Job
	var owner []int
	for i, p := range ports {
		reads[i].Port = p
		d, ok := portDest(f, p)
		if !ok {
			reads[i].Err = errNoRoute
			continue
		}
		jobs = append(jobs, query.Job{Dest: d})
		owner = append(owner, i)
	}
	for j, r := range query.FanOut[mad.SMInfo](ctx, c, jobs) {
		rd := &reads[owner[j]]
		rd.Info, rd.Err = r.Value, r.Err
		rd.Info.SMKey = 0 // a secret no check needs: never kept, never saved
	}
	return reads
}

// maxPKeyBlocks bounds the blocks read of one table: a capacity beyond
// it (2048 P_Keys) is a bad NodeInfo or SwitchInfo, not a table.
const maxPKeyBlocks = 64

// pkeyPorts are the ports whose P_Key tables the pkeys check compares:
// both ends of every link into a switch port that enforces partitions.
func pkeyPorts(f *discovery.Fabric) []*discovery.Port {
	enforced := map[*discovery.Port]bool{}
	for _, n := range f.Nodes {
		if n.Type != discovery.NodeSwitch {
			continue
		}
		for _, p := range n.Ports {
			if p == nil || p.Num == 0 || p.Remote == nil || len(p.PortInfo) == 0 || p.Remote.Node.Type == discovery.NodeSwitch {
				continue
			}
			if pi := p.Info(); pi.PartitionEnforcementInbound != 0 || pi.PartitionEnforcementOutbound != 0 {
				enforced[p], enforced[p.Remote] = true, true
			}
		}
	}
	return sortedPorts(f, func(p *discovery.Port) bool { return enforced[p] })
}

// pkeyCapacity is how many P_Keys port p's table holds.
func pkeyCapacity(p *discovery.Port) int {
	if p.Node.Type == discovery.NodeSwitch {
		var si mad.SwitchInfo
		if len(p.Node.SwitchInfo) >= mad.SwitchInfoSize {
			_ = si.Unmarshal(p.Node.SwitchInfo)
		}
		return int(si.PartitionEnforcementCap)
	}
	return int(p.Node.Info().PartitionCap)
}

// readPKeys reads the P_Key tables of pkeyPorts, 32 P_Keys a block
// (IBA 14.2.5.7: the modifier is the block, and on a switch the port
// number above it).
func readPKeys(ctx context.Context, c *query.Client, f *discovery.Fabric) []PKeyRead {
	ports := pkeyPorts(f)
	reads := make([]PKeyRead, len(ports))
	type block struct{ read, first int }
	var jobs []query.Job
	var blocks []block
	for i, p := range ports {
		reads[i].Port = p
		d, ok := portDest(f, p)
		n := min((pkeyCapacity(p)+31)/32, maxPKeyBlocks)
		if !ok {
			reads[i].Err = errNoRoute
			continue
		}
		reads[i].PKeys = make([]uint16, min(pkeyCapacity(p), n*32))
		for b := range n {
			mod := uint32(b)
			if p.Node.Type == discovery.NodeSwitch {
				mod |= uint32(p.Num) << 16
			}
			jobs = append(jobs, query.Job{Dest: d, Mod: mod})
			blocks = append(blocks, block{i, b * 32})
		}
	}
	for j, r := range query.FanOut[mad.PKeyTable](ctx, c, jobs) {
		rd := &reads[blocks[j].read]
		if r.Err != nil {
			if rd.Err == nil {
				rd.Err = r.Err
			}
			continue
		}
		copy(rd.PKeys[blocks[j].first:], r.Value.PKey[:])
	}
	for i := range reads {
		if reads[i].Err != nil {
			reads[i].PKeys = nil
		}
	}
	return reads
}
