package diagnose

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/query"
	"github.com/ibtool/ibtool/internal/routing"
)

// The forwarding tables in a sweep: the routing, credit-loop and
// multicast checks' part of the snapshot, how the sweep reads it and
// how a snapshot directory keeps it (TablesFile).

// readTables reads every switch's LFT (and MFT with multicast) through
// the query layer's fan-out, then the SL2VL tables where they can change
// the credit-loop analysis (sl2vlPorts).
func readTables(ctx context.Context, c *query.Client, f *discovery.Fabric, multicast bool) *routing.Tables {
	t := routing.Read(ctx, c, f, routing.Want{LFT: true, MFT: multicast})
	if ports := sl2vlPorts(t); len(ports) > 0 {
		routing.ReadSL2VL(ctx, c, t, ports)
	}
	return t
}

// sl2vlPorts are the switch ports whose SL2VL tables the sweep reads:
// the ports of the channels in a loop of the channel dependency graph
// built without VLs, where the port operates more than one data VL and
// its switch has the tables (slMapping).
//
// VLs can only take a dependency away, never add one: every cycle of the
// graph with VLs is a cycle of the graph without them. So where the
// graph without VLs has no loop, no table can change the answer, and
// none is read; where it has loops, the tables of the loops' channels
// (from every input port, which is what decides the VL a packet leaves
// by) say whether the VLs break them. A port that operates one data VL
// puts every packet on VL0 whatever its tables say. Reading every switch
// port's tables instead would cost a MAD per input and output port
// pair: 1.8 million SMPs on a 10,000-node fat tree, for an answer they
// cannot change.
func sl2vlPorts(t *routing.Tables) []*discovery.Port {
	var ports []*discovery.Port
	seen := map[*discovery.Port]bool{}
	for _, l := range t.CreditLoops().Loops {
		for _, ch := range l.Channels {
			p := ch.Node.Port(ch.Port)
			if p != nil && !seen[p] && len(p.PortInfo) >= mad.PortInfoSize && p.Info().OperationalVLs > 1 && slMapping(ch.Node) {
				seen[p] = true
				ports = append(ports, p)
			}
		}
	}
	slices.SortFunc(ports, func(a, b *discovery.Port) int {
		return cmp.Or(cmp.Compare(a.Node.GUID, b.Node.GUID), cmp.Compare(a.Num, b.Num))
	})
	return ports
}

// slMapping reports whether a switch has SLtoVLMappingTables to read:
// its port 0's CapabilityMask says IsSLMappingSupported (IBA 14.2.5.6),
// or its PortInfo was not read. A switch without them has nothing to
// answer; the analysis takes it to keep each SL on its VL, as the
// tables read elsewhere do.
func slMapping(n *discovery.Node) bool {
	p0 := n.Port(0)
	return p0 == nil || len(p0.PortInfo) < mad.PortInfoSize || p0.Info().CapabilityMask&uint32(mad.PortCapMaskSLMapping) != 0
}

// tableRead is one failed read of the tables, for the walk check.
type tableRead struct {
	node *discovery.Node
	port int // NoPort for the switch as a whole
	attr string
	err  error
}

// tableFailures are the reads of the tables that failed, in node GUID
// order: LFT and MFT blocks, SL2VL tables. (A switch the walk could not
// read the SwitchInfo of has no tables; the walk check reports that.)
func (s *Snapshot) tableFailures() []tableRead {
	if s.Tables == nil {
		return nil
	}
	var out []tableRead
	for _, n := range s.Fabric.SortedByGUID() {
		sw := s.Tables.Switches[n.GUID]
		if sw == nil || sw.Err != nil {
			continue // no SwitchInfo: the walk's own error, reported as such
		}
		if sw.LFT != nil {
			for _, b := range sw.LFT.Failed {
				out = append(out, tableRead{n, NoPort, fmt.Sprintf("LinearForwardingTable block %d", b.Block), b.Err})
			}
		}
		if sw.MFT != nil {
			for _, b := range sw.MFT.Failed {
				out = append(out, tableRead{n, NoPort, fmt.Sprintf("MulticastForwardingTable block %d position %d", b.Block, b.Chunk), b.Err})
			}
		}
		if sw.SL2VL != nil {
			pairs := make([]routing.PortPair, 0, len(sw.SL2VL.Failed))
			for pp := range sw.SL2VL.Failed {
				pairs = append(pairs, pp)
			}
			slices.SortFunc(pairs, comparePairs)
			for _, pp := range pairs {
				out = append(out, tableRead{n, int(pp.Out), fmt.Sprintf("SLtoVLMappingTable from port %d", pp.In), sw.SL2VL.Failed[pp]})
			}
		}
	}
	return out
}

func comparePairs(a, b routing.PortPair) int {
	return cmp.Or(cmp.Compare(a.Out, b.Out), cmp.Compare(a.In, b.In))
}

// tableReadFindings are walk.read_failed findings of the tables' reads.
func tableReadFindings(s *Snapshot, cfg *Config) []Finding {
	var out []Finding
	for _, r := range s.tableFailures() {
		if p := r.node.Port(r.port); r.port != NoPort && p != nil {
			out = append(out, readFailed(p, r.attr, r.err, cfg.Names))
			continue
		}
		out = append(out, Finding{Code: "walk.read_failed", Severity: Error, At: placeOf(r.node, nil, cfg.Names),
			Message:  fmt.Sprintf("the %s could not be read: %v", r.attr, r.err),
			Evidence: []Field{{"attribute", r.attr}, {"error", r.err.Error()}}})
	}
	return out
}

// TablesFile keeps the forwarding tables of a snapshot directory, and
// with --multicast the SA's multicast members (docs/diagnose.md); the
// LFTs' and MFTs' entries themselves are in TableDataFile.
const TablesFile = "tables.json"

// TableDataFile holds the entries of the tables TablesFile describes, as
// the wire has them: each LFT's ports, a byte per LID, and each MFT's
// port masks, two bytes each, big-endian, one table after the other in
// TablesFile's order. A 10,000-node fabric's LFTs are 14 MB: read as
// they are, not decoded from JSON (which took a third of a second).
const TableDataFile = "tables.data"

const (
	tablesFormat  = "ibtool-diagnose-tables"
	tablesVersion = 1
)

// tablesDoc is TablesFile.
type tablesDoc struct {
	Format    string        `json:"format"`
	Version   int           `json:"version"`
	Switches  []switchDoc   `json:"switches"`
	Multicast *multicastDoc `json:"multicast,omitempty"`
}

type switchDoc struct {
	NodeGUID mad.GUID `json:"node_guid"`
	// Error is why the switch has no tables.
	Error string     `json:"error,omitempty"`
	LFT   *lftDoc    `json:"lft,omitempty"`
	MFT   *mftDoc    `json:"mft,omitempty"`
	SL2VL []sl2vlDoc `json:"sl2vl,omitempty"`
}

// lftDoc is a linear forwarding table: the port of each of LIDs LIDs
// from FirstLID, one byte each (255: none), in TableDataFile.
type lftDoc struct {
	FirstLID int        `json:"first_lid"`
	LIDs     int        `json:"lids"`
	Failed   []blockDoc `json:"failed,omitempty"`
}

// mftDoc is a multicast forwarding table: for each of MLIDs MLIDs from
// FirstMLID, Chunks port masks of 16 ports (the first for ports 0-15),
// two bytes each, big-endian, in TableDataFile.
type mftDoc struct {
	FirstMLID int        `json:"first_mlid"`
	MLIDs     int        `json:"mlids"`
	Chunks    int        `json:"chunks"`
	Failed    []blockDoc `json:"failed,omitempty"`
}

type blockDoc struct {
	Block    int    `json:"block"`
	Chunk    int    `json:"chunk,omitempty"`
	Modifier uint32 `json:"modifier"`
	Error    string `json:"error"`
}

// sl2vlDoc is the SLtoVLMappingTable from input port In to output port
// Out: the VL of SL 0 to 15, one hex digit each.
type sl2vlDoc struct {
	In    uint8  `json:"in_port"`
	Out   uint8  `json:"out_port"`
	VLs   string `json:"vls,omitempty"`
	Error string `json:"error,omitempty"`
}

// saveTables writes s's tables to dir (nothing when there are none).
func saveTables(dir string, s *Snapshot) error {
	if s.Tables == nil {
		return nil
	}
	doc := tablesDoc{Format: tablesFormat, Version: tablesVersion, Switches: []switchDoc{}, Multicast: multicastDocOf(s.MCMembers)}
	var data []byte
	for _, n := range s.Fabric.SortedByGUID() {
		sw := s.Tables.Switches[n.GUID]
		if sw == nil {
			continue
		}
		d := switchDoc{NodeGUID: mad.GUID(n.GUID)}
		if sw.Err != nil {
			d.Error = sw.Err.Error()
		}
		if t := sw.LFT; t != nil {
			d.LFT = &lftDoc{FirstLID: t.First, LIDs: len(t.Ports), Failed: blockDocs(t.Failed)}
			data = append(data, t.Ports...)
		}
		if m := sw.MFT; m != nil {
			d.MFT = &mftDoc{FirstMLID: m.First, MLIDs: m.Len(), Chunks: m.Chunks, Failed: blockDocs(m.Failed)}
			for _, v := range m.Masks {
				data = append(data, byte(v>>8), byte(v))
			}
		}
		if sl := sw.SL2VL; sl != nil {
			d.SL2VL = sl2vlDocs(sl)
		}
		doc.Switches = append(doc.Switches, d)
	}
	b, err := json.MarshalIndent(doc, "", " ")
	if err != nil {
		return err
	}
	if err := writeFile(filepath.Join(dir, TableDataFile), data); err != nil {
		return err
	}
	return writeFile(filepath.Join(dir, TablesFile), append(b, '\n'))
}

func blockDocs(bs []routing.BlockError) []blockDoc {
	var out []blockDoc
	for _, b := range bs {
		out = append(out, blockDoc{b.Block, b.Chunk, b.Mod, b.Err.Error()})
	}
	return out
}

func sl2vlDocs(sl *routing.SL2VL) []sl2vlDoc {
	var pairs []routing.PortPair
	for pp := range sl.Tables {
		pairs = append(pairs, pp)
	}
	for pp := range sl.Failed {
		pairs = append(pairs, pp)
	}
	slices.SortFunc(pairs, comparePairs)
	out := []sl2vlDoc{}
	for _, pp := range pairs {
		d := sl2vlDoc{In: pp.In, Out: pp.Out}
		if err := sl.Failed[pp]; err != nil {
			d.Error = err.Error()
		} else {
			vls := sl.Tables[pp]
			digits := make([]byte, len(vls))
			for i, vl := range vls {
				digits[i] = "0123456789abcdef"[vl&15]
			}
			d.VLs = string(digits)
		}
		out = append(out, d)
	}
	return out
}

// loadTables reads dir's TablesFile into s; a directory without one (a
// sweep saved before the tables were read) leaves s without tables.
func loadTables(dir string, s *Snapshot) error {
	data, err := os.ReadFile(filepath.Join(dir, TablesFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var doc tablesDoc
	if err := json.Unmarshal(data, &doc); err != nil {
		return fmt.Errorf("%s: %w", TablesFile, err)
	}
	if doc.Format != tablesFormat || doc.Version != tablesVersion {
		return fmt.Errorf("%s: format %q version %d, want %q version %d", TablesFile, doc.Format, doc.Version, tablesFormat, tablesVersion)
	}
	entries, err := os.ReadFile(filepath.Join(dir, TableDataFile))
	if err != nil {
		return err
	}
	t := &routing.Tables{Fabric: s.Fabric, Switches: map[uint64]*routing.Switch{}}
	for _, d := range doc.Switches {
		sw, err := switchOf(s.Fabric, d, &entries)
		if err != nil {
			return fmt.Errorf("%s: switch %s: %w", TablesFile, d.NodeGUID, err)
		}
		t.Switches[sw.GUID] = sw
	}
	if len(entries) != 0 {
		return fmt.Errorf("%s: %d bytes more than %s describes", TableDataFile, len(entries), TablesFile)
	}
	s.Tables = t
	if doc.Multicast != nil {
		m, err := doc.Multicast.members()
		if err != nil {
			return fmt.Errorf("%s: multicast: %w", TablesFile, err)
		}
		s.MCMembers = m
	}
	return nil
}

// switchOf is the switch a document describes, its size and SwitchInfo
// from the fabric, its tables' entries taken from the front of data.
func switchOf(f *discovery.Fabric, d switchDoc, data *[]byte) (*routing.Switch, error) {
	take := func(n int) ([]byte, error) {
		if n < 0 || n > len(*data) {
			return nil, fmt.Errorf("%s ends before the switch's tables", TableDataFile)
		}
		b := (*data)[:n:n]
		*data = (*data)[n:]
		return b, nil
	}
	n := f.Node(uint64(d.NodeGUID))
	if n == nil || n.Type != discovery.NodeSwitch {
		return nil, fmt.Errorf("no such switch in %s", FabricFile)
	}
	sw := &routing.Switch{GUID: n.GUID, NumPorts: n.NumPorts}
	_ = sw.Info.Unmarshal(n.SwitchInfo) // the walk's, as the sweep read by it
	if d.Error != "" {
		sw.Err = errors.New(d.Error)
	}
	if l := d.LFT; l != nil {
		if l.FirstLID < 0 || l.FirstLID%routing.LIDsPerBlock != 0 {
			return nil, fmt.Errorf("lft first_lid %d is not a block's first", l.FirstLID)
		}
		ports, err := take(l.LIDs)
		if err != nil {
			return nil, err
		}
		sw.LFT = &routing.LFT{First: l.FirstLID, Ports: ports, Failed: blockErrors(l.Failed)}
	}
	if m := d.MFT; m != nil {
		if m.Chunks <= 0 || m.MLIDs < 0 || m.FirstMLID < routing.MinMLID {
			return nil, fmt.Errorf("mft: %d MLIDs of %d masks from 0x%x", m.MLIDs, m.Chunks, m.FirstMLID)
		}
		b, err := take(2 * m.MLIDs * m.Chunks)
		if err != nil {
			return nil, err
		}
		masks := make([]uint16, len(b)/2)
		for i := range masks {
			masks[i] = uint16(b[2*i])<<8 | uint16(b[2*i+1])
		}
		sw.MFT = &routing.MFT{First: m.FirstMLID, Chunks: m.Chunks, Masks: masks, Failed: blockErrors(m.Failed)}
	}
	if len(d.SL2VL) > 0 {
		sw.SL2VL = &routing.SL2VL{Tables: map[routing.PortPair][16]uint8{}, Failed: map[routing.PortPair]error{}}
		for _, t := range d.SL2VL {
			pp := routing.PortPair{In: t.In, Out: t.Out}
			if t.Error != "" {
				sw.SL2VL.Failed[pp] = errors.New(t.Error)
				continue
			}
			vls, ok := vlDigits(t.VLs)
			if !ok {
				return nil, fmt.Errorf("sl2vl %d to %d: vls %q is not 16 hex digits", t.In, t.Out, t.VLs)
			}
			sw.SL2VL.Tables[pp] = vls
		}
	}
	return sw, nil
}

// vlDigits reads a table's 16 VLs, one hex digit each.
func vlDigits(s string) (vls [16]uint8, ok bool) {
	if len(s) != len(vls) {
		return vls, false
	}
	for i := range vls {
		v, err := strconv.ParseUint(s[i:i+1], 16, 8)
		if err != nil {
			return vls, false
		}
		vls[i] = uint8(v)
	}
	return vls, true
}

func blockErrors(ds []blockDoc) []routing.BlockError {
	var out []routing.BlockError
	for _, d := range ds {
		out = append(out, routing.BlockError{Block: d.Block, Chunk: d.Chunk, Mod: d.Modifier, Err: errors.New(d.Error)})
	}
	return out
}
