package saquery

// The commands besides the record queries: the NodeRecord listings
// (-N, -D, -L, -l, -G, -O, -U), -s, -g and -m.

import (
	"fmt"

	"github.com/ibtool/ibtool/internal/ctext"
	"github.com/ibtool/ibtool/internal/mad"
)

// printNodeRecords is print_node_records (-N, -D, -L, -l, -G, -O, -U).
func (q *saQuery) printNodeRecords() error {
	recs, err := q.mainTable("NodeRecord", &mad.NodeRecord{}, 0, 0, nil)
	if err != nil {
		return err
	}
	q.res.line = saNodeLine(q.printMode)
	if q.printMode == saPrintAllDesc {
		q.res.Query, q.res.header = "NodeDescriptions", "   LID \"name\"\n================\n"
	}
	for _, r := range recs {
		nr := r.Struct.(*mad.NodeRecord)
		desc := string(nr.NodeDescription.NodeString[:])
		var match bool
		switch q.printMode {
		case saPrintAllDesc:
			match = nr.NodeInfo.NodeType == 1 // a CA
		case saPrintNameOfLID:
			match = q.requestedLID == nr.LID
		case saPrintNameOfGUID:
			match = q.requestedGUID == uint64(nr.NodeInfo.PortGUID)
		default:
			match = !q.hasName || ctext.StrnEqual(q.requestedName, desc, 64) || ctext.StrnEqual(q.requestedName, r.name, 64)
		}
		if match {
			r.nameKey = "name"
			q.res.Records = append(q.res.Records, r)
			if q.printMode == saPrintUniqueLIDOnly {
				break // the C tool exits after the first
			}
		}
	}
	return nil
}

// saNodeLine is print_node_record's line of each form but the dump (nil
// for the dump). A function, not a map: a package-level map is built at
// every start of the program, whatever command runs.
func saNodeLine(p saNodePrint) func(r *saRecord) string {
	switch p {
	case saPrintAllDesc:
		return func(r *saRecord) string {
			return fmt.Sprintf("%6d  \"%s\"\n", r.Struct.(*mad.NodeRecord).LID, r.name)
		}
	case saPrintLIDOnly, saPrintUniqueLIDOnly:
		return saLIDLine
	case saPrintGUIDOnly:
		return func(r *saRecord) string { return r.Struct.(*mad.NodeRecord).NodeInfo.PortGUID.String() + "\n" }
	case saPrintNameOfLID, saPrintNameOfGUID:
		return saNameLine
	}
	return nil
}

func saLIDLine(r *saRecord) string { return fmt.Sprintf("%d\n", r.Struct.(*mad.NodeRecord).LID) }

func saNameLine(r *saRecord) string { return r.name + "\n" }

// printIsSM is print_issm_records (-s): the PortInfoRecords whose
// CapabilityMask has IsSM, then those with IsSMdisabled.
func (q *saQuery) printIsSM() error {
	const capIsSM, capSMDisabled = 0x2, 0x400
	for _, capBit := range []uint32{capIsSM, capSMDisabled} {
		rec := &mad.PortInfoRecord{}
		rec.PortInfo.CapabilityMask = capBit
		recs, err := q.mainTable("IsSM", rec, mad.MustCompMask(rec.Desc(), "PortInfo.CapabilityMask"), 1<<31, nil)
		if err != nil {
			return err
		}
		if q.res.as == nil {
			q.res.as, q.res.header, q.res.Records = &saShortPortInfoDump, "IsSM ports\n", recs
		} else {
			q.res.IsSMDisabled = &recs
		}
	}
	return nil
}

// printMCGroups is -g: every MCMemberRecord, in the group form.
func (q *saQuery) printMCGroups() error {
	q.res.as = &saMCGroupDump
	return q.records("MCMemberRecord", &mad.MCMemberRecord{}, 0, nil)
}

// printMCMembers is print_multicast_member_records (-m): every
// MCMemberRecord with the name of the node whose port GUID its PortGID
// has (from the NodeRecords); with an MLID argument only the PortGIDs of
// that group.
func (q *saQuery) printMCMembers() error {
	recs, err := q.mainTable("MCMemberRecord", &mad.MCMemberRecord{}, 0, 0, nil)
	if err != nil {
		return err
	}
	nodes, err := q.getTable(mad.AttrNodeRecord, 0, nil, 0)
	if err != nil {
		return err
	}
	q.res.as = &saMCMemberDump
	mlid := ctext.Strtol(q.requestedName)
	if q.hasName {
		q.res.line = func(r *saRecord) string {
			return saLine(24, "PortGid", "%s (%s)", ctext.InetNtop6(r.Struct.(*mad.MCMemberRecord).PortGID), r.name)
		}
	}
	for _, r := range recs {
		mc := r.Struct.(*mad.MCMemberRecord)
		if q.hasName && int64(mc.MLID) != mlid {
			continue
		}
		r.name, r.nameKey = "<unknown>", "node_description"
		for _, n := range nodes {
			if n.Struct.(*mad.NodeRecord).NodeInfo.PortGUID == mc.PortGID.GUID() {
				r.name = n.name
				break
			}
		}
		q.res.Records = append(q.res.Records, r)
	}
	return nil
}
