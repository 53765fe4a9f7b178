package ibroute

// The forwarding tables of switches as infiniband-diags 44 prints them:
// ibroute for one switch, dump_fts (and its old names dump_lfts and
// dump_mfts) for every switch of the fabric. The tables are read through
// the query layer's fan-out: every block of every switch in flight at
// once within the engine's windows, only the blocks that LinearFDBTop or
// MulticastFDBCap/Top cover, each block's failure that switch's alone.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/ibtool/ibtool/internal/cli/cmdutil"
	"github.com/ibtool/ibtool/internal/ctext"
	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/jsonv"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/query"
)

// ftsOptions are the options ibroute and dump_fts share.
type ftsOptions struct {
	cmdutil.Common
	all       bool // -a: invalid entries too
	brief     bool // -n: no destinations
	multicast bool // -M
	src       query.Source
}

// ftsResult is what ibroute and dump_fts print: one table per switch.
type ftsResult struct {
	Switches   []*ftsSwitch `json:"switches"`
	multicast  bool
	fabric     *discovery.Fabric // dump_fts: the fabric the tables are of
	incomplete error             // dump_fts: the walk missed some (WalkIncomplete)
}

// ftsSwitch is one switch's table.
type ftsSwitch struct {
	NodeGUID mad.GUID     `json:"node_guid"`
	NodeName string       `json:"node_name"`
	Target   jsonv.Target `json:"target"` // how the switch was reached
	Route    string       `json:"-"`      // the C tool's portid2str (Target.Text)
	NumPorts int          `json:"num_ports"`
	FirstLID int          `json:"first_lid"`
	LastLID  int          `json:"last_lid"`
	Unicast  *lftTable    `json:"unicast,omitempty"`
	Multi    []*mftEntry  `json:"multicast,omitempty"`
	// Error is the first block that could not be read, if one was not.
	Error string `json:"error,omitempty"`

	warnings []string // IBWARN lines, printed before the header
	verbose  string   // the -v line of multicast tables
	brief    bool
	all      bool
	// truncated: ibroute stops at the failed block, with no summary.
	truncated bool
}

// lftTable is a switch's linear forwarding table as read: the output port
// of each LID from first on, a byte each (the tables of a 2000-node fabric
// have 600,000 LIDs, which as entries of their own took 90 MB), and what
// the Destination Info column and the JSON say of the LIDs' destinations.
type lftTable struct {
	first  int
	ports  []byte
	nports int
	all    bool // -a: invalid entries are shown too
	// dests names the LIDs' destinations; nil without Destination Info
	// (-n), unknown is the text for a LID it does not have.
	dests   map[int]*ftsDest
	unknown string
}

// lftEntry is one LID of a table as shown, and its JSON form.
type lftEntry struct {
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
func (t *lftTable) each(f func(e *lftEntry)) {
	if t == nil {
		return
	}
	var d *lidDescriber
	if t.dests != nil {
		d = &lidDescriber{unknown: t.unknown, lookup: func(lid int) (*ftsDest, bool) {
			dest, ok := t.dests[lid]
			return dest, ok
		}}
	}
	var e lftEntry
	for i, p := range t.ports {
		e = lftEntry{LID: t.first + i, Port: int(p), Valid: int(p) <= t.nports}
		if !e.Valid && !t.all {
			continue
		}
		if d != nil {
			e.text = d.describe(e.LID, e.Valid)
			if dest, ok := t.dests[e.LID]; ok && e.Valid {
				e.DestNodeGUID, e.DestPortGUID, e.DestName, e.DestPort = &dest.jsonNodeGUID, &dest.jsonPortGUID, dest.name, &dest.port
				e.DestType = jsonv.NodeTypeOf(dest.nodeType)
			}
		}
		f(&e)
	}
}

// shown is how many entries the table shows.
func (t *lftTable) shown() int {
	if t == nil {
		return 0
	}
	if t.all {
		return len(t.ports)
	}
	n := 0
	for _, p := range t.ports {
		if int(p) <= t.nports {
			n++
		}
	}
	return n
}

// validLIDs are the LIDs the table sends out of a port.
func (t *lftTable) validLIDs() []int {
	var lids []int
	for i, p := range t.ports {
		if int(p) <= t.nports {
			lids = append(lids, t.first+i)
		}
	}
	return lids
}

// MarshalJSON writes the entries shown, one switch's at a time.
func (t *lftTable) MarshalJSON() ([]byte, error) {
	var entries []lftEntry
	t.each(func(e *lftEntry) { entries = append(entries, *e) })
	return json.Marshal(entries)
}

// mftEntry is one MLID of a multicast forwarding table.
type mftEntry struct {
	MLID  int      `json:"mlid"`
	Ports []int    `json:"ports"`
	masks []uint16 // the port masks of the chunks covering the ports
}

// WriteText streams the tables: a big fabric's dump is tens of megabytes,
// which built in memory first cost more than the walk.
func (r *ftsResult) WriteText(w io.Writer) error {
	b := bufio.NewWriterSize(w, 64<<10)
	for _, sw := range r.Switches {
		if r.multicast {
			sw.multicastText(b)
		} else {
			sw.unicastText(b)
		}
	}
	return b.Flush()
}

func (sw *ftsSwitch) unicastText(b *bufio.Writer) {
	fmt.Fprintf(b, "Unicast lids [0x%x-0x%x] of switch %s guid %s (%s):\n", sw.FirstLID, sw.LastLID, sw.Route, sw.NodeGUID, sw.NodeName)
	b.WriteString("  Lid  Out   Destination\n       Port     Info \n")
	var line []byte
	sw.Unicast.each(func(e *lftEntry) {
		line = append(line[:0], "0x"...)
		line = ctext.AppendZeroPadded(line, uint64(e.LID), 16, 4)
		line = append(line, ' ')
		line = ctext.AppendZeroPadded(line, uint64(e.Port), 10, 3)
		line = append(line, ' ')
		line = append(line, e.text...)
		line = append(line, '\n')
		b.Write(line)
	})
	if !sw.truncated {
		fmt.Fprintf(b, "%d %slids dumped \n", sw.Unicast.shown(), validWord(sw.all))
	}
}

func (sw *ftsSwitch) multicastText(b *bufio.Writer) {
	nports := sw.NumPorts
	fmt.Fprintf(b, "Multicast mlids [0x%x-0x%x] of switch %s guid %s (%s):\n", sw.FirstLID, sw.LastLID, sw.Route, sw.NodeGUID, sw.NodeName)
	if sw.brief {
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
	b.WriteString(sw.verbose)
	for _, e := range sw.Multi {
		fmt.Fprintf(b, "0x%04x      %s\n", e.MLID, e.maskText(nports, sw.brief))
	}
	if !sw.truncated {
		fmt.Fprintf(b, "%d %smlids dumped \n", len(sw.Multi), validWord(sw.all))
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
func (e *mftEntry) maskText(nports int, brief bool) string {
	var b strings.Builder
	if brief {
		for _, m := range e.masks {
			fmt.Fprintf(&b, "%04x", m)
		}
		return b.String()
	}
	for i := 0; i <= nports; i++ {
		if e.masks[i/query.PortsPerMFTChunk]&(1<<(i%query.PortsPerMFTChunk)) != 0 {
			b.WriteString("x ")
		} else {
			b.WriteString("  ")
		}
	}
	return b.String()
}

// ftsDest is what a LID reaches, for the Destination Info column.
type ftsDest struct {
	nodeGUID, portGUID uint64
	nodeType           mad.NodeType
	port               int // the port number the LID is on
	baseLID            int
	lmc                int
	name               string // after the node-name-map
	// text is the Destination Info of the destination's LIDs, made once:
	// every switch's table has them all.
	text string
	// The JSON's fields, shared by the entries of every table.
	jsonNodeGUID, jsonPortGUID mad.GUID
}

// lidDescriber writes dump_lid's Destination Info column. It keeps
// dump_lid's state: after a port with an LMC, the LIDs of its range are
// shown as paths of that port ("path #2 out of 4"), not queried again.
type lidDescriber struct {
	lastPortLID, basePortLID int
	portGUID                 uint64
	// unknown is the text for a LID nothing answers for.
	unknown string
	lookup  func(lid int) (*ftsDest, bool)
}

func (d *lidDescriber) describe(lid int, valid bool) string {
	if lid <= d.lastPortLID {
		switch {
		case !valid:
			return fmt.Sprintf(": (path #%d - illegal port)", lid-d.basePortLID)
		case d.portGUID == 0:
			return fmt.Sprintf(": (path #%d out of %d)", lid-d.basePortLID+1, d.lastPortLID-d.basePortLID+1)
		}
		return fmt.Sprintf(": (path #%d out of %d: portguid %s)", lid-d.basePortLID+1, d.lastPortLID-d.basePortLID+1, mad.GUID(d.portGUID))
	}
	if !valid {
		return ": (illegal port)"
	}
	d.portGUID = 0
	dest, ok := d.lookup(lid)
	if !ok {
		return d.unknown
	}
	d.portGUID = dest.portGUID
	if dest.lmc > 0 {
		d.basePortLID = dest.baseLID
		d.lastPortLID = dest.baseLID + 1<<dest.lmc - 1
	}
	if dest.text == "" {
		dest.text = fmt.Sprintf(": (%s portguid %s: '%s')", dest.nodeType, mad.GUID(dest.portGUID), dest.name)
	}
	return dest.text
}

// unicastRange is dump_unicast_tables' LID range: up to LinearFDBTop, and
// the blocks it reads (ALIGN(end, 64)/64 blocks: a top that is a multiple
// of 64 leaves its own block unread, as in the C tool).
func unicastRange(start, end, top int) (first, last, firstBlock, endBlock int, warn string) {
	if end == 0 || end > top {
		end = top
	}
	if end > query.MaxUnicastLID {
		warn = fmt.Sprintf("illegal lft top %d, truncate to %d", end, query.MaxUnicastLID)
		end = query.MaxUnicastLID
	}
	const n = query.LIDsPerLFTBlock
	return start, end, start / n, (end + n - 1) / n, warn
}

// multicastRange is dump_multicast_tables' MLID range.
func multicastRange(start, end, capacity, top int, all bool) (first, last int, warns []string) {
	if end == 0 || end > query.MinMLID+capacity-1 {
		end = query.MinMLID + capacity - 1
	}
	if !all && top != 0 && top < end {
		if top < query.MinMLID-1 {
			warns = append(warns, fmt.Sprintf("illegal top mlid %x", top))
		} else {
			end = top
		}
	}
	if start == 0 {
		start = query.MinMLID
	} else if start < query.MinMLID {
		warns = append(warns, fmt.Sprintf("illegal start mlid %x, set to %x", start, query.MinMLID))
		start = query.MinMLID
	}
	if end > query.MaxMLID {
		warns = append(warns, fmt.Sprintf("illegal end mlid %x, truncate to %x", end, query.MaxMLID))
		end = query.MaxMLID
	}
	return start, end, warns
}
