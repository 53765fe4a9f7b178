package render

// How the C tools lay out what they read of a switch's tables: the LID
// and MLID ranges they read and print, and their buffer, which a block
// that fails leaves as the block before it left it.

import (
	"errors"
	"fmt"

	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/routing"
	"github.com/ibtool/ibtool/internal/rpc"
)

// DumpSwitch is a switch of the fabric whose tables dump_fts reads.
type DumpSwitch struct {
	Node  *discovery.Node
	Info  mad.SwitchInfo
	Route string // portid2str of the route dump_fts reads it by
}

// DumpSwitches are the switches of the fabric dump_fts reads, in its
// order (libibnetdisc's list: newest first), by the walk's directed
// route (a cache has none: by LID); a switch whose SwitchInfo the walk
// did not get is left out.
func DumpSwitches(fab *discovery.Fabric) []DumpSwitch {
	var out []DumpSwitch
	switches := fab.NodesOfType(discovery.NodeSwitch)
	for i := len(switches) - 1; i >= 0; i-- {
		n := switches[i]
		s := DumpSwitch{Node: n, Route: routing.DestOf(n).String()}
		if len(n.DRPath) > 0 {
			s.Route = "DR path slid 0; dlid 0; " + mad.FormatDRPath(n.DRPath)
		}
		if err := s.Info.Unmarshal(n.SwitchInfo); err != nil {
			continue
		}
		out = append(out, s)
	}
	return out
}

// UnicastRange is dump_unicast_tables' LID range, first..last, up to
// LinearFDBTop, and the LFT blocks it reads: ALIGN(last, 64)/64 of them,
// so that a top that is a multiple of 64 leaves its own block unread, as
// in the C tool. warn is its IBWARN for a top past the unicast LIDs.
func UnicastRange(start, end, top int) (first, last int, blocks routing.Range, warn string) {
	if end == 0 || end > top {
		end = top
	}
	if end > routing.MaxUnicastLID {
		warn = fmt.Sprintf("illegal lft top %d, truncate to %d", end, routing.MaxUnicastLID)
		end = routing.MaxUnicastLID
	}
	const n = routing.LIDsPerBlock
	// A range of no blocks reads nothing, as Range{} (the default) would
	// for the top of 0 that is the only way to get it from block 0.
	return start, end, routing.Range{First: start / n, End: (end + n - 1) / n}, warn
}

// MulticastRange is dump_multicast_tables' MLID range, first..last, and
// its IBWARNs.
func MulticastRange(start, end, capacity, top int, all bool) (first, last int, warns []string) {
	if end == 0 || end > routing.MinMLID+capacity-1 {
		end = routing.MinMLID + capacity - 1
	}
	if !all && top != 0 && top < end {
		if top < routing.MinMLID-1 {
			warns = append(warns, fmt.Sprintf("illegal top mlid %x", top))
		} else {
			end = top
		}
	}
	if start == 0 {
		start = routing.MinMLID
	} else if start < routing.MinMLID {
		warns = append(warns, fmt.Sprintf("illegal start mlid %x, set to %x", start, routing.MinMLID))
		start = routing.MinMLID
	}
	if end > routing.MaxMLID {
		warns = append(warns, fmt.Sprintf("illegal end mlid %x, truncate to %x", end, routing.MaxMLID))
		end = routing.MaxMLID
	}
	return start, end, warns
}

// MLIDBlocks are the MLIDs of the whole blocks that hold first..last:
// what the C tool reads for them, which its buffer keeps (empty when
// last < first).
func MLIDBlocks(first, last int) routing.Range {
	if last < first {
		return routing.Range{First: first, End: first}
	}
	const n = routing.MLIDsPerBlock
	return routing.Range{First: first / n * n, End: (last/n + 1) * n}
}

// UnicastTable lays out LIDs first..last of a switch's LFT as the C tool
// prints them: the entries of every block read in order, a failed block
// showing the block before it (zeros before the first), as its buffer
// does. With stop (ibroute) the table ends at the first failed block.
// failed are the blocks that failed, in order, up to where it stopped.
func UnicastTable(sw *routing.Switch, first, last int, stop bool) (t *LFTText, failed []routing.BlockError, truncated bool) {
	t = &LFTText{NumPorts: sw.NumPorts}
	lft := sw.LFT
	if lft == nil {
		return t, nil, false
	}
	var buf [routing.LIDsPerBlock]byte // the C tool's buffer
	started := false
	for off := 0; off < len(lft.Ports); off += routing.LIDsPerBlock {
		lo := lft.First + off
		block := lo / routing.LIDsPerBlock
		if e := blockError(lft.Failed, block, 0); e != nil {
			failed = append(failed, *e)
			if stop {
				return t, failed, true
			}
		} else {
			copy(buf[:], lft.Ports[off:])
		}
		from, to := max(lo, first), min(lo+routing.LIDsPerBlock, last+1)
		if from >= to {
			continue
		}
		if !started {
			t.First, t.Ports, started = from, make([]byte, 0, last+1-from), true
		}
		t.Ports = append(t.Ports, buf[from-lo:to-lo]...)
	}
	return t, failed, false
}

// MulticastTable lays out MLIDs first..last of a switch's MFT, read in
// whole blocks (MLIDBlocks), as the C tool prints them: the MLIDs with a
// port (all with -a), a failed block showing, chunk by chunk, what the
// block before it had there. With stop the table ends at the first
// failed block.
func MulticastTable(sw *routing.Switch, first, last int, all, stop bool) (entries []*MFTEntry, failed []routing.BlockError, truncated bool) {
	m := sw.MFT
	if m == nil || m.Chunks == 0 {
		return nil, nil, false
	}
	bufs := make([][routing.MLIDsPerBlock]uint16, m.Chunks) // the C tool's buffers, one per chunk
	for lo := m.First; lo < m.First+m.Len(); lo += routing.MLIDsPerBlock {
		block := (lo - routing.MinMLID) / routing.MLIDsPerBlock
		for c := range bufs {
			if e := blockError(m.Failed, block, c); e != nil {
				failed = append(failed, *e)
				if stop {
					return entries, failed, true
				}
				continue
			}
			for i := range bufs[c] {
				bufs[c][i] = m.Mask(lo+i, c)
			}
		}
		for mlid := max(lo, first); mlid < min(lo+routing.MLIDsPerBlock, last+1); mlid++ {
			e := &MFTEntry{MLID: mlid, Ports: []int{}}
			nonzero := false
			for c := range bufs {
				mask := bufs[c][mlid-lo]
				e.masks = append(e.masks, mask)
				nonzero = nonzero || mask != 0
			}
			for p := 0; p <= sw.NumPorts; p++ {
				if e.masks[p/routing.PortsPerMask]&(1<<(p%routing.PortsPerMask)) != 0 {
					e.Ports = append(e.Ports, p)
				}
			}
			if nonzero || all {
				entries = append(entries, e)
			}
		}
	}
	return entries, failed, false
}

// blockError is the failure of a block (and chunk), nil when it was read.
func blockError(failed []routing.BlockError, block, chunk int) *routing.BlockError {
	for i := range failed {
		if failed[i].Block == block && failed[i].Chunk == chunk {
			return &failed[i]
		}
	}
	return nil
}

// IbrouteBlockLine is what ibroute writes to stderr of a block it could
// not read (it prints no more of the table).
func IbrouteBlockLine(e routing.BlockError) string {
	return fmt.Sprintf("SubnGet() failed; MAD status 0x%x AM 0x%x", madStatus(e.Err), e.Mod)
}

// DumpFtsBlockLine is what dump_fts writes to stderr of a block of
// table ("LFT", "MFT") it could not read of the switch named name,
// reached by route (it goes on with its buffer).
func DumpFtsBlockLine(n *discovery.Node, name, route, table string, e routing.BlockError) string {
	return fmt.Sprintf("SubnGet(%s) failed on switch '%s' %s Node GUID 0x%x SMA LID %d; MAD status 0x%x AM 0x%x",
		table, name, route, n.GUID, n.SMALID, madStatus(e.Err), e.Mod)
}

// madStatus is the MAD status of a failed request, 0 when none came back.
func madStatus(err error) uint16 {
	var se *rpc.StatusError
	if errors.As(err, &se) {
		return se.Reply.Status()
	}
	return 0
}
