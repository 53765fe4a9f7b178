package saquery

// The record types saquery knows, with their names, arguments and dumps.

import (
	"fmt"
	"strings"
	"sync"

	"github.com/ibtool/ibtool/internal/mad"
)

// saqueryType is one record type saquery knows (saquery.c's query_cmds,
// plus ibtool's additions).
type saqueryType struct {
	name, alias string
	attr        uint16
	usage       string
	extraNames  []string // ibtool only: other names that select it
	dump        *saDump  // how its records print
	ibtoolOnly  bool
	// The query: run, or else (lidQuery) the whole table, or the records
	// the "lid/x/y" argument selects by the fields in lid.
	run func(q *saQuery, args []string) error
	lid []saLIDField
}

// saqueryTypes are the record types, built on first use: the table
// refers to the queries' methods, which refer to it (so it cannot be a
// package-level literal), and an init function would build it at every
// start of the program, whatever command runs.
func saqueryTypes() []*saqueryType {
	saqueryTypesOnce.Do(func() { saqueryTypeList = newSaqueryTypes() })
	return saqueryTypeList
}

var (
	saqueryTypesOnce sync.Once
	saqueryTypeList  []*saqueryType
)

func newSaqueryTypes() []*saqueryType {
	return []*saqueryType{
		{name: "ClassPortInfo", alias: "CPI", attr: mad.AttrClassPortInfo, run: (*saQuery).classPortInfo},
		{name: "NodeRecord", alias: "NR", attr: mad.AttrNodeRecord, usage: "[lid]", dump: &saNodeRecordDump,
			lid: []saLIDField{{"LID", 16, 16}}},
		{name: "PortInfoRecord", alias: "PIR", attr: mad.AttrPortInfoRecord, usage: "[[lid]/[port]/[options]]", dump: &saPortInfoRecordDump,
			lid: []saLIDField{{"EndPortLID", 16, 16}, {"PortNum", 8, 8}, {"Options", 8, 8}}},
		{name: "SL2VLTableRecord", alias: "SL2VL", attr: mad.AttrSLtoVLMappingTableRecord, usage: "[[lid]/[in_port]/[out_port]]", dump: &saSL2VLDump,
			lid: []saLIDField{{"LID", 16, 16}, {"InputPortNum", 8, 8}, {"OutputPortNum", 8, 8}}, extraNames: []string{"SLtoVLMappingTableRecord"}},
		{name: "PKeyTableRecord", alias: "PKTR", attr: mad.AttrPKeyTableRecord, usage: "[[lid]/[port]/[block]]", dump: &saPKeyDump,
			lid: []saLIDField{{"LID", 16, 16}, {"PortNum", 8, 8}, {"BlockNum", 16, 16}}, extraNames: []string{"P_KeyTableRecord"}},
		{name: "VLArbitrationTableRecord", alias: "VLAR", attr: mad.AttrVLArbitrationTableRecord, usage: "[[lid]/[port]/[block]]", dump: &saVLArbDump,
			lid: []saLIDField{{"LID", 16, 16}, {"OutputPortNum", 8, 8}, {"BlockNum", 8, 8}}},
		{name: "InformInfoRecord", alias: "IIR", attr: mad.AttrInformInfoRecord, usage: "[subscriber_gid]", dump: &saInformInfoDump,
			run: (*saQuery).informInfoRecords},
		{name: "LinkRecord", alias: "LR", attr: mad.AttrLinkRecord, usage: "[[from_lid]/[from_port]] [[to_lid]/[to_port]]", dump: &saLinkDump,
			run: (*saQuery).linkRecords},
		{name: "ServiceRecord", alias: "SR", attr: mad.AttrServiceRecord, dump: newSaServiceDump()},
		{name: "PathRecord", alias: "PR", attr: mad.AttrPathRecord, dump: &saPathDump, run: (*saQuery).pathRecords},
		{name: "MCMemberRecord", alias: "MCMR", attr: mad.AttrMCMemberRecord, dump: &saMCMemberRecordDump, run: (*saQuery).mcMemberRecords},
		{name: "LFTRecord", alias: "LFTR", attr: mad.AttrLinearForwardingTableRecord, usage: "[[lid]/[block]]", dump: &saLFTDump,
			lid: []saLIDField{{"LID", 16, 16}, {"BlockNum", 16, 16}}, extraNames: []string{"LinearForwardingTableRecord"}},
		// The argument is "mlid/position/block": position before block.
		{name: "MFTRecord", alias: "MFTR", attr: mad.AttrMulticastForwardingTableRecord, usage: "[[mlid]/[position]/[block]]", dump: &saMFTDump,
			lid: []saLIDField{{"LID", 16, 16}, {"Position", 8, 4}, {"BlockNum", 16, 9}}, extraNames: []string{"MulticastForwardingTableRecord"}},
		{name: "GUIDInfoRecord", alias: "GIR", attr: mad.AttrGUIDInfoRecord, usage: "[[lid]/[block]]", dump: newSaGUIDInfoDump(),
			lid: []saLIDField{{"LID", 16, 16}, {"BlockNum", 8, 8}}},
		{name: "SwitchInfoRecord", alias: "SWIR", attr: mad.AttrSwitchInfoRecord, usage: "[lid]", dump: &saSwitchInfoDump,
			lid: []saLIDField{{"LID", 16, 16}}, extraNames: []string{"SwitchInfo", "SWI"}},
		{name: "SMInfoRecord", alias: "SMIR", attr: mad.AttrSMInfoRecord, usage: "[lid]", dump: &saSMInfoDump,
			lid: []saLIDField{{"LID", 16, 16}}, extraNames: []string{"SMInfo"}},
		{name: "RFTRecord", alias: "RFTR", attr: mad.AttrRandomForwardingTableRecord, usage: "[[lid]/[block]]", dump: &saRFTDump,
			lid: []saLIDField{{"LID", 16, 16}, {"BlockNum", 16, 16}}, extraNames: []string{"RandomForwardingTableRecord"}, ibtoolOnly: true},
		{name: "ServiceAssociationRecord", alias: "SAR", attr: mad.AttrServiceAssociationRecord, dump: &saServiceAssociationDump,
			ibtoolOnly: true},
	}
}

// findSaqueryType matches a record type's name or alias in any case, as
// find_query does (and ibtool's extra names).
func findSaqueryType(name string) *saqueryType {
	for _, t := range saqueryTypes() {
		if strings.EqualFold(name, t.name) || strings.EqualFold(name, t.alias) {
			return t
		}
		for _, n := range t.extraNames {
			if strings.EqualFold(name, n) {
				return t
			}
		}
	}
	return nil
}

func saqueryTypeByAttr(attr uint16) *saqueryType {
	for _, t := range saqueryTypes() {
		if t.attr == attr {
			return t
		}
	}
	return nil
}

// saqueryUse is the command line saquery takes.
const saqueryUse = "saquery [options] [query-name] [<name> | <lid> | <guid>] [MEMBER=VALUE ...]"

// saqueryNames lists the record types as the C tool's usage does.
func saqueryNames() string {
	var b strings.Builder
	b.WriteString("Supported query names (and aliases):\n")
	for _, t := range saqueryTypes() {
		fmt.Fprintf(&b, "  %s (%s) %s", t.name, t.alias, t.usage)
		if t.ibtoolOnly {
			b.WriteString(" (ibtool only)")
		}
		b.WriteString("\n")
	}
	b.WriteString("\n  Queries node records by default.")
	return b.String()
}
