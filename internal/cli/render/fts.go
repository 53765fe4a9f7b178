package render

// The forwarding tables as infiniband-diags 44 prints them: ibroute for
// one switch, dump_fts (and its old names dump_lfts, dump_mfts) for every
// switch (ibroute.c's dump_unicast_tables, dump_multicast_tables and
// dump_lid). The tables are internal/routing's; this is their text and
// JSON. check_lft_balance reads what this text says of each LID
// (LIDDescriber) without the text.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/ibtool/ibtool/internal/ctext"
	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/jsonv"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/nodename"
	"github.com/ibtool/ibtool/internal/routing"
)

// FTS is what ibroute and dump_fts print: one table per switch, unicast
// or (Multicast) multicast.
type FTS struct {
	Switches  []*FTSwitch `json:"switches"`
	Multicast bool        `json:"-"`
}

// FTSwitch is one switch's table as printed.
type FTSwitch struct {
	NodeGUID mad.GUID     `json:"node_guid"`
	NodeName string       `json:"node_name"`
	Target   jsonv.Target `json:"target"` // how the switch was reached
	NumPorts int          `json:"num_ports"`
	FirstLID int          `json:"first_lid"`
	LastLID  int          `json:"last_lid"`
	Unicast  *LFTText     `json:"unicast,omitempty"`
	Multi    []*MFTEntry  `json:"multicast,omitempty"`
	// Error is the first block that could not be read, if one was not.
	Error string `json:"error,omitempty"`

	Route   string `json:"-"` // the C tool's portid2str (Target.Text)
	Verbose string `json:"-"` // the -v line of multicast tables
	Brief   bool   `json:"-"` // -n: masks in hex, no destinations
	All     bool   `json:"-"` // -a: invalid entries too
	// Truncated: the table stops at a failed block, with no summary
	// line (ibroute).
	Truncated bool `json:"-"`
}

// LFTText is a switch's unicast table as shown: the out port of each LID
// from First on, a byte each (a 2000-node fabric's tables have 600,000
// LIDs), and the destinations its Destination Info column names.
type LFTText struct {
	First    int
	Ports    []byte
	NumPorts int
	All      bool // -a: invalid entries are shown too
	// Dests names the LIDs' destinations; nil without Destination Info
	// (-n).
	Dests *Dests
}

// Dests are the destinations of LIDs, for the Destination Info column.
type Dests struct {
	ByLID []*Dest // indexed by LID; nil where nothing answers
	// Unknown is the text for a LID nothing answers for.
	Unknown string
}

// Of is lid's destination, nil when it has none.
func (d *Dests) Of(lid int) *Dest {
	if d == nil || lid < 0 || lid >= len(d.ByLID) {
		return nil
	}
	return d.ByLID[lid]
}

// Dest is what a LID reaches.
type Dest struct {
	NodeGUID, PortGUID mad.GUID
	NodeType           mad.NodeType
	Port               int // the port number the LID is on
	BaseLID, LMC       int
	Name               string // after the node-name-map
	// text is the Destination Info of the destination's LIDs, made once:
	// every switch's table has them all.
	text string
}

// FabricDests are the destinations of a fabric's LIDs, as libibnetdisc
// maps them (routing.LIDMap's owners), one Dest per port.
func FabricDests(owners []*discovery.Port, names *nodename.Map, unknown string) *Dests {
	d := &Dests{ByLID: make([]*Dest, len(owners)), Unknown: unknown}
	byPort := map[*discovery.Port]*Dest{}
	for lid, p := range owners {
		if p == nil {
			continue
		}
		dest := byPort[p]
		if dest == nil {
			n := p.Node
			dest = &Dest{NodeGUID: mad.GUID(n.GUID), PortGUID: mad.GUID(p.GUID), NodeType: mad.NodeType(n.Type), Port: p.Num,
				BaseLID: int(p.BaseLID), LMC: int(p.LMC), Name: names.Name(n.GUID, n.Desc())}
			byPort[p] = dest
		}
		d.ByLID[lid] = dest
	}
	return d
}

// LFTEntry is one LID of a table as shown, and its JSON form.
type LFTEntry struct {
	LID          int            `json:"lid"`
	Port         int            `json:"port"`
	Valid        bool           `json:"valid"`
	DestNodeGUID *mad.GUID      `json:"dest_node_guid,omitempty"`
	DestPortGUID *mad.GUID      `json:"dest_port_guid,omitempty"`
	DestPort     *int           `json:"dest_port,omitempty"`
	DestType     jsonv.NodeType `json:"dest_node_type,omitempty"`
	DestName     string         `json:"dest_node_name,omitempty"`
	text         string         // the Destination Info column
}

// each calls f with every entry the table shows, in order: the valid
// LIDs, every LID with -a. The entry is f's only during the call.
func (t *LFTText) each(f func(e *LFTEntry)) {
	if t == nil {
		return
	}
	var d *LIDDescriber
	if t.Dests != nil {
		d = &LIDDescriber{Dests: t.Dests}
	}
	var e LFTEntry
	for i, p := range t.Ports {
		e = LFTEntry{LID: t.First + i, Port: int(p), Valid: int(p) <= t.NumPorts}
		if !e.Valid && !t.All {
			continue
		}
		if d != nil {
			e.text = d.Describe(e.LID, e.Valid).Text(t.Dests.Unknown)
			if dest := t.Dests.Of(e.LID); dest != nil && e.Valid {
				e.DestNodeGUID, e.DestPortGUID, e.DestName, e.DestPort = &dest.NodeGUID, &dest.PortGUID, dest.Name, &dest.Port
				e.DestType = jsonv.NodeTypeOf(dest.NodeType)
			}
		}
		f(&e)
	}
}

// Shown is how many entries the table shows.
func (t *LFTText) Shown() int {
	if t == nil {
		return 0
	}
	if t.All {
		return len(t.Ports)
	}
	n := 0
	for _, p := range t.Ports {
		if int(p) <= t.NumPorts {
			n++
		}
	}
	return n
}

// ValidLIDs are the LIDs the table sends out of a port.
func (t *LFTText) ValidLIDs() []int {
	if t == nil {
		return nil
	}
	var lids []int
	for i, p := range t.Ports {
		if int(p) <= t.NumPorts {
			lids = append(lids, t.First+i)
		}
	}
	return lids
}

// MarshalJSON writes the entries shown, one switch's at a time.
func (t *LFTText) MarshalJSON() ([]byte, error) {
	var entries []LFTEntry
	t.each(func(e *LFTEntry) { entries = append(entries, *e) })
	return json.Marshal(entries)
}

// MFTEntry is one MLID of a multicast forwarding table.
type MFTEntry struct {
	MLID  int      `json:"mlid"`
	Ports []int    `json:"ports"`
	masks []uint16 // the port masks of the chunks covering the ports
}

// WriteText streams the tables: a big fabric's dump is tens of megabytes,
// which built in memory first cost more than the walk.
func (r *FTS) WriteText(w io.Writer) error {
	b := bufio.NewWriterSize(w, 64<<10)
	for _, sw := range r.Switches {
		if r.Multicast {
			sw.multicastText(b)
		} else {
			sw.unicastText(b)
		}
	}
	return b.Flush()
}

func (sw *FTSwitch) unicastText(b *bufio.Writer) {
	fmt.Fprintf(b, "Unicast lids [0x%x-0x%x] of switch %s guid %s (%s):\n", sw.FirstLID, sw.LastLID, sw.Route, sw.NodeGUID, sw.NodeName)
	b.WriteString("  Lid  Out   Destination\n       Port     Info \n")
	var line []byte
	sw.Unicast.each(func(e *LFTEntry) {
		line = append(line[:0], "0x"...)
		line = ctext.AppendZeroPadded(line, uint64(e.LID), 16, 4)
		line = append(line, ' ')
		line = ctext.AppendZeroPadded(line, uint64(e.Port), 10, 3)
		line = append(line, ' ')
		line = append(line, e.text...)
		line = append(line, '\n')
		b.Write(line)
	})
	if !sw.Truncated {
		fmt.Fprintf(b, "%d %slids dumped \n", sw.Unicast.Shown(), validWord(sw.All))
	}
}

func (sw *FTSwitch) multicastText(b *bufio.Writer) {
	nports := sw.NumPorts
	fmt.Fprintf(b, "Multicast mlids [0x%x-0x%x] of switch %s guid %s (%s):\n", sw.FirstLID, sw.LastLID, sw.Route, sw.NodeGUID, sw.NodeName)
	if sw.Brief {
		b.WriteString(" MLid       Port Mask\n")
	} else {
		if nports > 9 {
			b.WriteString("            ")
			for i := 0; i <= nports; i++ {
				c := byte(' ')
				if i%10 == 0 {
					c = byte('0' + i/10) // past 99 C goes on with ':', ';' ...
				}
				b.WriteByte(c)
				b.WriteByte(' ')
			}
			b.WriteByte('\n')
		}
		b.WriteString("     Ports: ")
		for i := 0; i <= nports; i++ {
			fmt.Fprintf(b, "%d ", i%10)
		}
		b.WriteString("\n MLid\n")
	}
	b.WriteString(sw.Verbose)
	for _, e := range sw.Multi {
		fmt.Fprintf(b, "0x%04x      %s\n", e.MLID, e.maskText(nports, sw.Brief))
	}
	if !sw.Truncated {
		fmt.Fprintf(b, "%d %smlids dumped \n", len(sw.Multi), validWord(sw.All))
	}
}

func validWord(all bool) string {
	if all {
		return ""
	}
	return "valid "
}

// maskText is dump_mlid's column: the masks in hex (-n), or an x under
// every port the MLID goes out of.
func (e *MFTEntry) maskText(nports int, brief bool) string {
	var b strings.Builder
	if brief {
		for _, m := range e.masks {
			fmt.Fprintf(&b, "%04x", m)
		}
		return b.String()
	}
	for i := 0; i <= nports; i++ {
		if e.masks[i/routing.PortsPerMask]&(1<<(i%routing.PortsPerMask)) != 0 {
			b.WriteString("x ")
		} else {
			b.WriteString("  ")
		}
	}
	return b.String()
}

// LIDKind is what dump_lid's Destination Info says of a LID.
type LIDKind uint8

const (
	// LIDDest: the LID's destination (LIDDesc.Dest).
	LIDDest LIDKind = iota
	// LIDUnknown: nothing answers for it.
	LIDUnknown
	// LIDIllegal: the entry is not a port of the switch (-a).
	LIDIllegal
	// LIDPath: a LID of the LMC range of the port described before it,
	// path Path out of Of.
	LIDPath
	// LIDPathIllegal: such a LID whose entry is not a port (-a).
	LIDPathIllegal
)

// LIDDesc is what dump_lid says of one LID.
type LIDDesc struct {
	Kind LIDKind
	Dest *Dest
	// Path and Of: LIDPath's "path #Path out of Of"; LIDPathIllegal's
	// Path is the LID's offset from the range's base, as C prints it.
	Path, Of int
	// PortGUID is LIDPath's port GUID, 0 when that port did not answer.
	PortGUID mad.GUID
}

// LIDDescriber is dump_lid's state: after a port with an LMC, the LIDs
// of its range are paths of that port ("path #2 out of 4"), not looked up
// again.
type LIDDescriber struct {
	Dests                    *Dests
	lastPortLID, basePortLID int
	portGUID                 mad.GUID
}

// Describe says what the Destination Info column says of lid, whose
// entry is valid or not; the LIDs come in increasing order.
func (d *LIDDescriber) Describe(lid int, valid bool) LIDDesc {
	if lid <= d.lastPortLID {
		if !valid {
			return LIDDesc{Kind: LIDPathIllegal, Path: lid - d.basePortLID}
		}
		return LIDDesc{Kind: LIDPath, Path: lid - d.basePortLID + 1, Of: d.lastPortLID - d.basePortLID + 1, PortGUID: d.portGUID}
	}
	if !valid {
		return LIDDesc{Kind: LIDIllegal}
	}
	d.portGUID = 0
	dest := d.Dests.Of(lid)
	if dest == nil {
		return LIDDesc{Kind: LIDUnknown}
	}
	d.portGUID = dest.PortGUID
	if dest.LMC > 0 {
		d.basePortLID = dest.BaseLID
		d.lastPortLID = dest.BaseLID + 1<<dest.LMC - 1
	}
	return LIDDesc{Kind: LIDDest, Dest: dest}
}

// Text is the Destination Info column; unknown is the text for a LID
// nothing answers for.
func (l LIDDesc) Text(unknown string) string {
	switch l.Kind {
	case LIDUnknown:
		return unknown
	case LIDIllegal:
		return ": (illegal port)"
	case LIDPathIllegal:
		return fmt.Sprintf(": (path #%d - illegal port)", l.Path)
	case LIDPath:
		if l.PortGUID == 0 {
			return fmt.Sprintf(": (path #%d out of %d)", l.Path, l.Of)
		}
		return fmt.Sprintf(": (path #%d out of %d: portguid %s)", l.Path, l.Of, l.PortGUID)
	}
	dest := l.Dest
	if dest.text == "" {
		dest.text = fmt.Sprintf(": (%s portguid %s: '%s')", dest.NodeType, dest.PortGUID, dest.Name)
	}
	return dest.text
}
