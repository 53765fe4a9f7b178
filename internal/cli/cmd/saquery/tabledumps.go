package saquery

// The dumps of the link and table records, which end in a table.

import (
	"bufio"
	"fmt"
	"math/bits"

	"github.com/ibtool/ibtool/internal/mad"
)

var saLinkDump = saDump{title: "LinkRecord dump:\n", col: 27, fields: []saField{
	{label: "FromLID", path: "FromLID", format: "%d"},
	{label: "FromPort", path: "FromPort", format: "%d"},
	{label: "ToPort", path: "ToPort", format: "%d"},
	{label: "ToLID", path: "ToLID", format: "%d"},
}}

var saSL2VLDump = saDump{title: "SL2VLTableRecord dump:\n", col: 27, fields: []saField{
	{label: "LID", path: "LID", format: "%d"},
	{label: "InPort", path: "InputPortNum", format: "%d"},
	{label: "OutPort", path: "OutputPortNum", format: "%d"},
}, table: func(w *bufio.Writer, r *saRecord) {
	w.WriteString("\t\tSL: 0| 1| 2| 3| 4| 5| 6| 7| 8| 9|10|11|12|13|14|15|\n\t\tVL:")
	for _, vl := range r.Struct.(*mad.SLtoVLMappingTableRecord).SLtoVLMappingTable.VL {
		fmt.Fprintf(w, "%2d|", vl)
	}
	w.WriteString("\n")
}}

var saVLArbDump = saDump{title: "VLArbTableRecord dump:\n", col: 27, fields: []saField{
	{label: "LID", path: "LID", format: "%d"},
	{label: "Port", path: "OutputPortNum", format: "%d"},
	{label: "Block", path: "BlockNum", format: "%d"},
}, table: func(w *bufio.Writer, r *saRecord) {
	t := r.Struct.(*mad.VLArbitrationTableRecord).VLArbitrationTable.Entry
	for half := 0; half < len(t); half += 16 {
		w.WriteString("\t\tVL    :")
		for _, e := range t[half : half+16] {
			fmt.Fprintf(w, "%2d|", e.VL)
		}
		w.WriteString("\n\t\tWeight:")
		for _, e := range t[half : half+16] {
			fmt.Fprintf(w, "%2d|", e.Weight)
		}
		w.WriteString("\n")
	}
}}

var saPKeyDump = saDump{title: "PKeyTableRecord dump:\n", col: 27, fields: []saField{
	{label: "LID", path: "LID", format: "%d"},
	{label: "Port", path: "PortNum", format: "%d"},
	// The C tool prints block_num without byte swapping: it and OpenSM
	// keep it in host (x86) order, so the number reads little endian.
	{label: "Block", format: "%d", value: func(r *saRecord) any {
		return bits.ReverseBytes16(r.Struct.(*mad.PKeyTableRecord).BlockNum)
	}},
}, table: func(w *bufio.Writer, r *saRecord) {
	w.WriteString("\t\tPKey Table:\n")
	pkeys := r.Struct.(*mad.PKeyTableRecord).PKeyTable.PKey
	for row := 0; row < len(pkeys); row += 8 {
		w.WriteString("\t\t")
		for i, pk := range pkeys[row : row+8] {
			if i > 0 {
				w.WriteByte(' ')
			}
			fmt.Fprintf(w, "0x%04x", pk)
		}
		w.WriteString("\n")
	}
	w.WriteString("\n")
}}

var saLFTDump = saDump{title: "LFT Record dump:\n", col: 27, fields: []saField{
	{label: "LID", path: "LID", format: "%d"},
	{label: "Block", path: "BlockNum", format: "%d"},
}, table: func(w *bufio.Writer, r *saRecord) {
	rec := r.Struct.(*mad.LinearForwardingTableRecord)
	w.WriteString("\t\tLFT:\n\t\tLID\tPort Number\n")
	for i, port := range rec.LinearForwardingTable.Port {
		fmt.Fprintf(w, "\t\t%d\t%d\n", int(rec.BlockNum)*64+i, port)
	}
	w.WriteString("\n")
}}

// saRFTDump is ibtool's (the C tool has no RFTRecord query), in the LFT
// record's style: one line per valid entry.
var saRFTDump = saDump{title: "RFT Record dump:\n", col: 27, fields: []saField{
	{label: "LID", path: "LID", format: "%d"},
	{label: "Block", path: "BlockNum", format: "%d"},
}, table: func(w *bufio.Writer, r *saRecord) {
	w.WriteString("\t\tRFT:\n\t\tLID\tLMC\tPort Number\n")
	for _, e := range r.Struct.(*mad.RandomForwardingTableRecord).RandomForwardingTable.Entry {
		if e.Valid != 0 {
			fmt.Fprintf(w, "\t\t%d\t%d\t%d\n", e.LID, e.LMC, e.Port)
		}
	}
	w.WriteString("\n")
}}

// newSaGUIDInfoDump is the GUIDInfoRecord dump, made when used (see
// newSaServiceDump).
func newSaGUIDInfoDump() *saDump {
	return &saDump{title: "GUIDInfo Record dump:\n", col: 27, fields: append([]saField{
		{label: "LID", path: "LID", format: "%d"},
		{label: "Block", path: "BlockNum", format: "%d"},
	}, saEach("GUID %d", "GUIDInfo.GUID[%d]", 8, 0, "0x%016x")...)}
}

var saMFTDump = saDump{title: "MFT Record dump:\n", col: 27, fields: []saField{
	{label: "LID", path: "LID", format: "%d"},
	{label: "Position", path: "Position", format: "%d"},
	{label: "Block", path: "BlockNum", format: "%d"},
}, table: func(w *bufio.Writer, r *saRecord) {
	rec := r.Struct.(*mad.MulticastForwardingTableRecord)
	w.WriteString("\t\tMFT:\n\t\tMLID\tPort Mask\n")
	for i, mask := range rec.MulticastForwardingTable.PortMask {
		fmt.Fprintf(w, "\t\t0x%04x\t0x%04x\n", 0xC000+int(rec.BlockNum)*32+i, mask)
	}
	w.WriteString("\n")
}}
