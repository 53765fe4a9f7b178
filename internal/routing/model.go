package routing

import (
	"math/bits"

	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/mad"
)

// Table geometry (IBA 14.2.5.10, 14.2.5.12) and the LID spaces (IBA 4.1.1).
const (
	// LIDsPerBlock is the number of LIDs in one LinearForwardingTable block.
	LIDsPerBlock = 64
	// MLIDsPerBlock is the number of MLIDs in one MulticastForwardingTable block.
	MLIDsPerBlock = 32
	// PortsPerMask is the number of ports one MFT port mask covers.
	PortsPerMask = 16
	// MaxUnicastLID is the highest unicast LID.
	MaxUnicastLID = 0xBFFF
	// MinMLID and MaxMLID bound the multicast LIDs.
	MinMLID = 0xC000
	MaxMLID = 0xFFFE
	// NoPort is the LFT entry of a LID the switch does not forward.
	NoPort = 0xFF
)

// Tables are the forwarding tables of a fabric's switches, keyed by node
// GUID, with the fabric they were read from. A switch missing from
// Switches was not read; one that is there may still carry an error.
type Tables struct {
	Fabric   *discovery.Fabric
	Switches map[uint64]*Switch
}

// Switch is what was read of one switch: its SwitchInfo and the tables
// asked for, each nil when not read.
type Switch struct {
	GUID     uint64
	NumPorts int
	Info     mad.SwitchInfo
	LFT      *LFT
	MFT      *MFT
	SL2VL    *SL2VL
	// Err is why the switch has no tables at all (its SwitchInfo could
	// not be had); a block that failed is its table's own (LFT.Failed).
	Err error
}

// BlockError is a table block that could not be read. Mod is the
// attribute modifier it was asked with (the C tools print it).
type BlockError struct {
	Block int // LFT: the block number; MFT: the block of 32 MLIDs from 0xC000
	Chunk int // MFT: the port mask position (ports 16*Chunk..); 0 for an LFT
	Mod   uint32
	Err   error
}

// LFT is a linear forwarding table: one byte per LID, the port the switch
// sends that LID out of (0 for the switch itself, NoPort for none). A big
// fabric's tables hold hundreds of thousands of LIDs, so an entry is a
// byte, never a struct. The table covers whole blocks from First.
type LFT struct {
	// First is the LID of Ports[0], a multiple of LIDsPerBlock (0 when the
	// table was read from its start).
	First int
	Ports []byte
	// Failed are the blocks that could not be read; their LIDs read as
	// NoPort.
	Failed []BlockError
}

// Port is the entry of lid: NoPort when the table has none.
func (t *LFT) Port(lid int) int {
	if t == nil || lid < t.First || lid-t.First >= len(t.Ports) {
		return NoPort
	}
	return int(t.Ports[lid-t.First])
}

// Last is the highest LID the table covers (First-1 when it is empty).
func (t *LFT) Last() int { return t.First + len(t.Ports) - 1 }

// Readable reports whether lid's block was read (a LID past the table's
// end counts as read: the switch has no entry there).
func (t *LFT) Readable(lid int) bool {
	if t == nil {
		return false
	}
	for _, f := range t.Failed {
		if f.Block == lid/LIDsPerBlock {
			return false
		}
	}
	return true
}

// MFT is a multicast forwarding table: for each MLID from First, the
// ports the switch forwards it to, as the 16-port masks of the wire
// (Chunks of them per MLID): 6 bytes an MLID on a 36-port switch.
type MFT struct {
	First  int // the MLID of the first entry
	Chunks int // port masks per MLID
	Masks  []uint16
	// Failed are the (block, chunk) reads that failed; their masks read
	// as empty.
	Failed []BlockError
}

// Len is the number of MLIDs the table covers.
func (m *MFT) Len() int {
	if m == nil || m.Chunks == 0 {
		return 0
	}
	return len(m.Masks) / m.Chunks
}

// Ports is the set of ports mlid goes out of (empty when not covered).
func (m *MFT) Ports(mlid int) PortSet {
	var s PortSet
	i := mlid - m.firstOrZero()
	if m == nil || i < 0 || i >= m.Len() {
		return s
	}
	for c, mask := range m.Masks[i*m.Chunks : (i+1)*m.Chunks] {
		s[c/4] |= uint64(mask) << (16 * (c % 4))
	}
	return s
}

// Mask is the 16-port mask chunk of mlid (0 when not covered).
func (m *MFT) Mask(mlid, chunk int) uint16 {
	i := mlid - m.firstOrZero()
	if m == nil || i < 0 || i >= m.Len() || chunk >= m.Chunks {
		return 0
	}
	return m.Masks[i*m.Chunks+chunk]
}

func (m *MFT) firstOrZero() int {
	if m == nil {
		return 0
	}
	return m.First
}

// SL2VL holds a switch's SLtoVLMappingTables (IBA 14.2.5.8): the VL a
// packet of each SL takes out of port Out when it came in by port In.
type SL2VL struct {
	Tables map[PortPair][16]uint8
	// Failed are the pairs that could not be read.
	Failed map[PortPair]error
}

// PortPair is an input and an output port of a switch.
type PortPair struct{ In, Out uint8 }

// VL is the VL of sl from in to out; ok is false without that table.
func (s *SL2VL) VL(in, out, sl int) (vl int, ok bool) {
	if s == nil {
		return 0, false
	}
	t, ok := s.Tables[PortPair{uint8(in), uint8(out)}]
	return int(t[sl&15]), ok
}

// PortSet is a set of port numbers 0..255.
type PortSet [4]uint64

// Add puts port p in the set.
func (s *PortSet) Add(p int) { s[p>>6&3] |= 1 << (p & 63) }

// Has reports whether port p is in the set.
func (s PortSet) Has(p int) bool { return p >= 0 && p < 256 && s[p>>6]&(1<<(p&63)) != 0 }

// Len is the number of ports in the set.
func (s PortSet) Len() int {
	return bits.OnesCount64(s[0]) + bits.OnesCount64(s[1]) + bits.OnesCount64(s[2]) + bits.OnesCount64(s[3])
}

// Ports lists the set's ports in increasing order.
func (s PortSet) Ports() []int {
	var out []int
	for w, word := range s {
		for word != 0 {
			b := bits.TrailingZeros64(word)
			out = append(out, w*64+b)
			word &= word - 1
		}
	}
	return out
}

// LIDMap is which port holds each unicast LID, as libibnetdisc maps them:
// every LID of every port's LMC range, the first port found (in the
// fabric's node order) keeping a LID. A switch's LIDs are its port 0's
// (its other ports carry the same values), so they map to port 0 where
// the walk read it. Indexed by LID; nil where no port has it.
func LIDMap(f *discovery.Fabric) []*discovery.Port {
	top := 0
	for _, n := range f.Nodes {
		for _, p := range n.Ports {
			if p != nil && p.BaseLID != 0 && int(p.BaseLID) <= MaxUnicastLID {
				top = max(top, min(lidEnd(p), MaxUnicastLID))
			}
		}
	}
	owners := make([]*discovery.Port, top+1)
	for _, n := range f.Nodes {
		for _, p := range n.Ports {
			if p == nil || p.BaseLID == 0 || int(p.BaseLID) > MaxUnicastLID {
				continue
			}
			for lid := int(p.BaseLID); lid <= min(lidEnd(p), MaxUnicastLID); lid++ {
				if owners[lid] == nil {
					owners[lid] = p
				}
			}
		}
	}
	return owners
}

// lidEnd is the last LID of a port's LMC range.
func lidEnd(p *discovery.Port) int { return int(p.BaseLID) + 1<<p.LMC - 1 }

// portState is the port's PortState (IBA 14.2.5.6: bits 260..263, the
// low nibble of byte 32), read straight from the raw PortInfo: decoding
// every field of every port of a big fabric shows in the analyses. 0
// when the PortInfo was not read.
func portState(p *discovery.Port) mad.PortState {
	if p == nil || len(p.PortInfo) < mad.PortInfoSize {
		return 0
	}
	return mad.PortState(p.PortInfo[32] & 0x0F)
}

// active reports whether a port is Active.
func active(p *discovery.Port) bool { return portState(p) == mad.PortStateActive }
