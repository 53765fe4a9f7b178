package saquery

// The record queries: the "lid/x/y" arguments and selector options
// turned into a record's fields and component mask.

import (
	"errors"
	"strings"

	"github.com/ibtool/ibtool/internal/cli/cmdutil"
	"github.com/ibtool/ibtool/internal/ctext"
	"github.com/ibtool/ibtool/internal/mad"
)

// getLID is get_lid: a node description (when the argument starts with a
// letter; looked up in the SA's NodeRecords) or a LID.
func (q *saQuery) getLID(name string) (uint16, error) {
	if name != "" && ctext.IsAlpha(name[0]) {
		lid, err := q.lidFromName(name)
		if err != nil {
			code, msg := SaENONET, ""
			var ex *cmdutil.Failure
			if errors.As(err, &ex) {
				code, msg = ex.Code, ex.CStderr
			}
			return 0, saFail(code, "%sFailed to find lid for \"%s\": %s\n", msg, name, ctext.Strerror(code))
		}
		return lid, nil
	}
	// strtol with its errno test: a number out of long's range clamps, and
	// so fails the range test too.
	v := ctext.Strtol(name)
	if v <= 0 || v > 0xFFFF {
		return 0, saFail(SaEINVAL, "Invalid lid specified: \"%s\"\n", name)
	}
	return uint16(v), nil
}

var saNoSuchNode = errors.New("no such node")

func (q *saQuery) lidFromName(name string) (uint16, error) {
	recs, err := q.getTable(mad.AttrNodeRecord, 0, nil, 0)
	if err != nil {
		return 0, err
	}
	for _, r := range recs {
		if nr := r.Struct.(*mad.NodeRecord); ctext.StrnEqual(name, string(nr.NodeDescription.NodeString[:]), 64) {
			return nr.LID, nil
		}
	}
	return 0, saNoSuchNode
}

// parseLIDAndPorts is parse_lid_and_ports: "lid[/port1[/port2]]"; a port
// that does not parse is -1 (not given).
func (q *saQuery) parseLIDAndPorts(s string) (lid uint16, port1, port2 int64, err error) {
	port1, port2 = -1, -1
	lidStr, rest, more := strings.Cut(s, "/")
	if lid, err = q.getLID(lidStr); err != nil || !more {
		return lid, port1, port2, err
	}
	p1, p2, more2 := strings.Cut(rest, "/")
	if v, ok := ctext.Strtoul(p1); ok {
		port1 = int64(int32(uint32(v)))
	}
	if more2 {
		if v, ok := ctext.Strtoul(p2); ok {
			port2 = int64(int32(uint32(v)))
		}
	}
	return lid, port1, port2, nil
}

// given is CHECK_AND_SET_VAL's test: val differs from the "not given"
// value in the field's C width.
func saGiven(val int64, bits uint, unset int64) (uint64, bool) {
	m := uint64(1)<<bits - 1
	return uint64(val) & m, uint64(val)&m != uint64(unset)&m
}

// saRecBuilder fills a record's fields and collects their component bits.
type saRecBuilder struct {
	rec   mad.Struct
	names []string
}

func (b *saRecBuilder) set(path string, v uint64) {
	if err := mad.Set(b.rec, path, v); err != nil {
		panic(err) // callers mask values to the field's width
	}
	b.names = append(b.names, path)
}

// setIf sets a field when the C tool would: val given in bits wide C
// arithmetic; the value is cut to the field (width bits).
func (b *saRecBuilder) setIf(path string, val int64, bits uint, unset int64, width uint) {
	if v, ok := saGiven(val, bits, unset); ok {
		b.set(path, v&(uint64(1)<<width-1))
	}
}

func (b *saRecBuilder) setGID(path string, g mad.GID) {
	if g == (mad.GID{}) {
		return
	}
	if err := mad.SetBytes(b.rec, path, g[:]); err != nil {
		panic(err)
	}
	b.names = append(b.names, path)
}

func (b *saRecBuilder) mask() uint64 { return mad.MustCompMask(b.rec.Desc(), b.names...) }

// saLIDField is a field a "lid/x/y" argument sets: its path, the C
// variable's width (for the "not given" test) and the field's width.
type saLIDField struct {
	path        string
	bits, width uint
}

// lidQuery is the common form of the "[lid]" and "lid/x/y" queries (and
// get_and_dump_all_records, with no fields): qt.lid names the record's LID
// and port-like fields.
func (q *saQuery) lidQuery(qt *saqueryType, args []string) error {
	rec := mad.LookupAttr(mad.ClassSubnAdm, qt.attr).New()
	b := &saRecBuilder{rec: rec}
	if len(args) > 0 && len(qt.lid) > 0 {
		lid, p1, p2, err := q.parseLIDAndPorts(args[0])
		if err != nil {
			return err
		}
		b.setIf(qt.lid[0].path, int64(lid), 16, 0, 16)
		vals := []int64{p1, p2}
		for i, f := range qt.lid[1:] {
			b.setIf(f.path, vals[i], f.bits, -1, f.width)
		}
	}
	return q.records(qt.name, rec, b.mask(), nil)
}

// records is the command's own GetTable, whose records are the result.
func (q *saQuery) records(name string, rec mad.Struct, mask uint64, patch func([]byte)) error {
	recs, err := q.mainTable(name, rec, mask, 0, patch)
	q.res.Records = append(q.res.Records, recs...)
	return err
}

func (q *saQuery) linkRecords(args []string) error {
	rec := &mad.LinkRecord{}
	b := &saRecBuilder{rec: rec}
	fromLID, toLID := uint16(0), uint16(0)
	fromPort, toPort := int64(-1), int64(-1)
	var err error
	if len(args) > 0 {
		if fromLID, fromPort, _, err = q.parseLIDAndPorts(args[0]); err != nil {
			return err
		}
	}
	if len(args) > 1 {
		if toLID, toPort, _, err = q.parseLIDAndPorts(args[1]); err != nil {
			return err
		}
	}
	b.setIf("FromLID", int64(fromLID), 16, 0, 16)
	b.setIf("FromPort", fromPort, 8, -1, 8)
	b.setIf("ToLID", int64(toLID), 16, 0, 16)
	b.setIf("ToPort", toPort, 8, -1, 8)
	return q.records("LinkRecord", rec, b.mask(), nil)
}

func (q *saQuery) informInfoRecords(args []string) error {
	rec := &mad.InformInfoRecord{}
	b := &saRecBuilder{rec: rec}
	if len(args) > 0 {
		g, err := saParseGID(args[0])
		if err != nil {
			return saFail(SaEINVAL, "Invalid SubscriberGID specified: \"%s\"\n", args[0])
		}
		// The C tool sets the mask even for the all-zero GID.
		rec.SubscriberGID = g
		b.names = append(b.names, "SubscriberGID")
	}
	return q.records("InformInfoRecord", rec, b.mask(), nil)
}

func (q *saQuery) pathRecords([]string) error {
	p := &q.p
	rec := &mad.PathRecord{}
	b := &saRecBuilder{rec: rec}
	if p.serviceID != 0 {
		b.set("ServiceID", p.serviceID)
	}
	b.setGID("SGID", p.sgid)
	b.setGID("DGID", p.dgid)
	b.setIf("SLID", int64(p.slid), 16, 0, 16)
	b.setIf("DLID", int64(p.dlid), 16, 0, 16)
	b.setIf("HopLimit", p.hopLimit, 32, -1, 8)
	b.setIf("FlowLabel", int64(p.flowLabel), 32, 0, 20)
	b.setIf("TClass", int64(p.tclass), 8, 0, 8)
	b.setIf("Reversible", p.reversible, 8, -1, 1)
	b.setIf("NumbPath", p.numbPath, 8, -1, 7)
	b.setIf("PKey", int64(p.pkey), 16, 0, 16)
	b.setIf("SL", p.sl, 16, -1, 4)
	if p.qosClass != -1 {
		b.set("QoSClass", uint64(p.qosClass)&0xFFF)
	}
	b.selector("MTU", p.mtu)
	b.selector("Rate", p.rate)
	b.selector("PacketLifeTime", p.pktLife)
	return q.records("PathRecord", rec, b.mask(), nil)
}

// selector is CHECK_AND_SET_VAL_AND_SEL: a byte with the selector in its
// two high bits and the value in the others, given when not 0.
func (b *saRecBuilder) selector(field string, v uint8) {
	if v == 0 {
		return
	}
	b.set(field+"Selector", uint64(v>>6))
	b.set(field, uint64(v&0x3F))
}

// mcMemberRecords builds the MCMemberRecord of the MCMR query from the
// options. The C tool's ProxyJoin is a one-bit C bitfield, the low bit of
// byte 49 on x86 (OpenSM reads it there too); the patch puts it there.
func (q *saQuery) mcMemberRecords([]string) error {
	p := &q.p
	rec := &mad.MCMemberRecord{}
	b := &saRecBuilder{rec: rec}
	b.setGID("MGID", p.mgid)
	b.setGID("PortGID", p.gid)
	b.setIf("MLID", int64(p.mlid), 16, 0, 16)
	b.setIf("QKey", int64(p.qkey), 32, 0, 32)
	b.selector("MTU", p.mtu)
	b.selector("Rate", p.rate)
	b.selector("PacketLifeTime", p.pktLife)
	b.setIf("TClass", int64(p.tclass), 8, 0, 8)
	b.setIf("PKey", int64(p.pkey), 16, 0, 16)
	b.setIf("SL", p.sl, 8, -1, 4)
	b.setIf("FlowLabel", int64(p.flowLabel), 32, 0, 20)
	b.setIf("HopLimit", p.hopLimit, 8, -1, 8)
	b.setIf("Scope", int64(p.scope), 8, 0, 4)
	b.setIf("JoinState", int64(p.joinState), 8, 0, 4)
	var patch func([]byte)
	if v, ok := saGiven(p.proxyJoin, 8, -1); ok {
		b.names = append(b.names, "ProxyJoin")
		patch = func(d []byte) { d[49] = d[49]&^1 | byte(v&1) }
	}
	return q.records("MCMemberRecord", rec, b.mask(), patch)
}

func (q *saQuery) classPortInfo([]string) error {
	q.res.Query, q.res.Method, q.res.AttributeID = "ClassPortInfo", "Get", mad.AttrClassPortInfo
	q.res.ClassPortInfo = q.res.cpi
	return nil
}
