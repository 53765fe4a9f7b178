package query

// Fabric-wide PerfMgt counters (IBA 16.1): what ibqueryerrors, the
// ibcheck* family and exporters read of many ports at once. A node's PMA
// says in its ClassPortInfo what it can do (16.1.3.1), so that is read
// once per node first; then PortCounters, PortCountersExtended where the
// PMA has them, and any other counter group asked for, of every port at
// once through the engine's windows. Every port gets its own result or
// error: one lost MAD never stops the rest.

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/ibtool/ibtool/internal/mad"
)

// AllPortSelect is the PortSelect of a node's sum over all its ports, on
// a PMA whose CapabilityMask has AllPortSelect.
const AllPortSelect = 0xFF

// CounterPort is a port whose counters are read.
type CounterPort struct {
	NodeGUID uint64
	NodeType mad.NodeType
	// Port is the PortSelect: the port's number (0 is a switch's
	// management port), or AllPortSelect.
	Port int
	// Dest is the PMA's GMP address: a switch's LID for all its ports, a
	// CA's or router's port's own LID (its PMA counts the port a MAD
	// arrives on).
	Dest Dest
}

func (p CounterPort) String() string { return fmt.Sprintf("%s port %d", p.Dest, p.Port) }

// PMACaps is what a node's PMA says it can do: its ClassPortInfo's
// capability masks, or the error that reading them met.
type PMACaps struct {
	CapabilityMask  mad.PerfCapMask
	CapabilityMask2 uint32 // mad.PerfCapMask2 bits
	Err             error
}

// Has tells whether the PMA has capability bit.
func (c *PMACaps) Has(bit mad.PerfCapMask) bool { return c != nil && c.CapabilityMask&bit != 0 }

// Extended tells whether the PMA has PortCountersExtended (either width
// flavour, as the C tools check).
func (c *PMACaps) Extended() bool {
	return c.Has(mad.PerfCapMaskExtWidth | mad.PerfCapMaskExtWidthNoIETF)
}

// ExtendedErrors tells whether PortCountersExtended has the 64-bit error
// counters too (CapabilityMask2 IsAdditionalPortCountersExtendedSupported).
func (c *PMACaps) ExtendedErrors() bool {
	return c != nil && c.CapabilityMask2&uint32(mad.PerfCapMask2AddlPortCountersExt) != 0
}

// CounterOptions say what ReadCounters reads of each port.
type CounterOptions struct {
	// Caps are the nodes' capabilities by node GUID, when already read
	// (ReadCaps); nodes missing are read.
	Caps map[uint64]*PMACaps
	// NoBasic skips PortCounters on ports whose PortCountersExtended is
	// read (ibqueryerrors --counters reads one or the other).
	NoBasic bool
	// NoExtended skips PortCountersExtended.
	NoExtended bool
	// WantExtended, when not nil, says which PMAs that have
	// PortCountersExtended it is read of (ibqueryerrors needs it only
	// where it has the error counters, unless it prints data counters).
	WantExtended func(*PMACaps) bool
	// Groups are other counter attributes read of every port
	// (PortXmitDiscardDetails, PortRcvErrorDetails, ...).
	Groups []*mad.StructDesc
	// Timeout is each MAD's timeout per attempt; 0 for the engine's.
	Timeout time.Duration
}

// PortCounters is what was read of one port.
type PortCounters struct {
	CounterPort
	// Caps are the node's PMA's capabilities (shared by its ports).
	Caps *PMACaps
	// Basic is PortCounters, nil when not read. Its PortXmitWait is 0
	// when the PMA does not have PortCountersXmitWaitSupported (the
	// field is reserved then).
	Basic *mad.PortCounters
	// Extended is PortCountersExtended, nil when not read.
	Extended *mad.PortCountersExtended
	// Groups are CounterOptions.Groups' attributes in that order, nil
	// where not read.
	Groups []mad.Struct
	// Err is the first read that failed (a *CounterError); what was read
	// before it is kept.
	Err error
}

// CounterError is a failed counter read of one port.
type CounterError struct {
	Port  CounterPort
	Attr  string // the attribute: ClassPortInfo, PortCounters, ...
	Reset bool   // a reset failed, not a read
	Err   error
}

func (e *CounterError) Error() string {
	op := "reading"
	if e.Reset {
		op = "resetting"
	}
	return fmt.Sprintf("%s the %s of %s: %v", op, e.Attr, e.Port, e.Err)
}

func (e *CounterError) Unwrap() error { return e.Err }

// ReadCaps reads the PerfMgt ClassPortInfo of each node of ports, once
// per node, all at once. It asks the Dest of the node's first port in
// ports, with PortSelect 0 on a switch and that port's number elsewhere
// (as ibqueryerrors does).
func ReadCaps(ctx context.Context, c *Client, ports []CounterPort, timeout time.Duration) map[uint64]*PMACaps {
	// Room for a node per port: a fabric has thousands (growing the
	// slices was a third of ReadCaps' CPU on the 2000-node fabric).
	caps := make(map[uint64]*PMACaps, len(ports))
	jobs := make([]Job, 0, len(ports))
	owners := make([]CounterPort, 0, len(ports))
	for _, p := range ports {
		if _, ok := caps[p.NodeGUID]; ok {
			continue
		}
		caps[p.NodeGUID] = &PMACaps{}
		sel := p.Port
		if p.NodeType == mad.NodeTypeSwitch {
			sel = 0
		}
		// pma_query_via puts the PortSelect in data byte 1 of every
		// request, ClassPortInfo's ClassVersion.
		jobs = append(jobs, Job{Dest: p.Dest, Class: mad.ClassPerf, In: &mad.ClassPortInfo{ClassVersion: uint8(sel)}, Timeout: timeout})
		owners = append(owners, CounterPort{NodeGUID: p.NodeGUID, NodeType: p.NodeType, Port: sel, Dest: p.Dest})
	}
	outs := make([]mad.Struct, len(jobs))
	for i := range outs {
		outs[i] = &mad.ClassPortInfo{}
	}
	errs := FanOutStructs(ctx, c, jobs, outs)
	for i, p := range owners {
		cap := caps[p.NodeGUID]
		if errs[i] != nil {
			cap.Err = &CounterError{Port: p, Attr: "ClassPortInfo", Err: errs[i]}
			continue
		}
		cpi := outs[i].(*mad.ClassPortInfo)
		cap.CapabilityMask, cap.CapabilityMask2 = mad.PerfCapMask(cpi.CapabilityMask), cpi.CapabilityMask2
	}
	return caps
}

// ReadCounters reads the counters of every port in ports: the nodes'
// capabilities first (unless given), then everything else in one
// fan-out. A node whose ClassPortInfo failed is read as a PMA without
// capabilities (PortCounters alone), as ibqueryerrors does; its ports'
// Caps carry the error. The results are in ports' order.
func ReadCounters(ctx context.Context, c *Client, ports []CounterPort, opts CounterOptions) []PortCounters {
	caps := opts.Caps
	var missing []CounterPort
	for _, p := range ports {
		if caps[p.NodeGUID] == nil {
			missing = append(missing, p)
		}
	}
	if len(missing) > 0 {
		read := ReadCaps(ctx, c, missing, opts.Timeout)
		for guid, cap := range caps {
			read[guid] = cap
		}
		caps = read
	}

	res := make([]PortCounters, len(ports))
	// At most two attributes and the groups per port: room for all, as a
	// fabric has thousands of ports.
	n := len(ports) * (2 + len(opts.Groups))
	jobs := make([]Job, 0, n)
	outs := make([]mad.Struct, 0, n)
	owner := make([]int, 0, n) // index in res of each job
	add := func(i int, out mad.Struct) {
		jobs = append(jobs, Job{Dest: ports[i].Dest, In: PortSelect(out.Desc(), ports[i].Port), Timeout: opts.Timeout})
		outs = append(outs, out)
		owner = append(owner, i)
	}
	for i, p := range ports {
		r := &res[i]
		r.CounterPort, r.Caps = p, caps[p.NodeGUID]
		ext := !opts.NoExtended && r.Caps.Extended() && (opts.WantExtended == nil || opts.WantExtended(r.Caps))
		if !ext || !opts.NoBasic {
			r.Basic = &mad.PortCounters{}
			add(i, r.Basic)
		}
		if ext {
			r.Extended = &mad.PortCountersExtended{}
			add(i, r.Extended)
		}
		if len(opts.Groups) > 0 {
			r.Groups = make([]mad.Struct, len(opts.Groups))
			for g, desc := range opts.Groups {
				r.Groups[g] = desc.New()
				add(i, r.Groups[g])
			}
		}
	}
	errs := FanOutStructs(ctx, c, jobs, outs)
	// Jobs are in port order, and within a port in the order above, so
	// the first error of a port is its first failed read.
	for j, err := range errs {
		if err == nil {
			continue
		}
		r := &res[owner[j]]
		if r.Err == nil {
			r.Err = &CounterError{Port: r.CounterPort, Attr: outs[j].Desc().Name, Err: err}
		}
		forgetFailed(r, outs[j])
	}
	for i := range res {
		r := &res[i]
		if r.Basic != nil && !r.Caps.Has(mad.PerfCapMaskXmitWait) {
			r.Basic.PortXmitWait = 0
		}
	}
	return res
}

// forgetFailed sets to nil the attribute of r whose read (into failed)
// did not succeed, so that a nil attribute always means "not read".
func forgetFailed(r *PortCounters, failed mad.Struct) {
	switch failed {
	case mad.Struct(r.Basic):
		r.Basic = nil
	case mad.Struct(r.Extended):
		r.Extended = nil
	}
	for g := range r.Groups {
		if r.Groups[g] == failed {
			r.Groups[g] = nil
		}
	}
}

// PortSelect is the request data of a PerfMgt Get of desc: the port in
// PortSelect (data byte 1 of every PerfMgt counter attribute, IBA
// 16.1.3.5), the rest 0, as libibmad's pma_query_via sends it.
func PortSelect(desc *mad.StructDesc, port int) mad.Struct {
	return portSelectData{desc, uint8(port)}
}

// portSelectData is request data with a PortSelect and nothing else,
// cheap to make for every port of a fabric (a generic Set of the field
// costs more than the MAD's round trip).
type portSelectData struct {
	desc *mad.StructDesc
	port uint8
}

func (p portSelectData) Desc() *mad.StructDesc { return p.desc }

func (p portSelectData) Marshal(b []byte) error {
	if len(b) < 2 {
		return fmt.Errorf("%s: no room for PortSelect in %d bytes", p.desc.Name, len(b))
	}
	b[1] = p.port
	return nil
}

func (p portSelectData) Unmarshal([]byte) error {
	return fmt.Errorf("%s: a PortSelect request holds nothing to decode", p.desc.Name)
}

// FanOutStructs is FanOut for attributes of different types, or decoded
// in a layout of the caller's (AsAttr): job i's reply is decoded into
// outs[i], and errs[i] is job i's error.
func FanOutStructs(ctx context.Context, c *Client, jobs []Job, outs []mad.Struct) []error {
	return c.fanOut(ctx, jobs, func(i int) mad.Struct { return outs[i] })
}

// CounterReset is a reset of the counters Select chooses in attribute
// Attr of a port (IBA 16.1.3.5: a Set whose CounterSelect and
// CounterSelect2 bits say which counters go to 0).
type CounterReset struct {
	Port   CounterPort
	Attr   *mad.StructDesc
	Select uint32 // CounterSelect in the low 16 bits, CounterSelect2 above; 0 is all
}

// Counter select bits (IBA 16.1.3.5 table 228, 16.1.4.11): CounterSelect
// in the low 16 bits, CounterSelect2 from bit 16.
const (
	// SelectErrors are PortCounters' error counters (SymbolErrorCounter
	// .. VL15Dropped).
	SelectErrors uint32 = 0x0FFF
	// SelectData are PortCounters' data and packet counters.
	SelectData uint32 = 0xF000
	// SelectXmitWait is PortCounters' PortXmitWait (CounterSelect2).
	SelectXmitWait uint32 = 1 << 16
	// SelectExtData are PortCountersExtended's data and packet counters,
	// SelectExtDataNoIETF the four of a PMA without ExtendedWidth.
	SelectExtData       uint32 = 0xFF
	SelectExtDataNoIETF uint32 = 0x0F
	// SelectExtErrors are PortCountersExtended's additional error
	// counters, SelectExtXmitWait its PortXmitWait.
	SelectExtErrors   uint32 = 0xFFF0000
	SelectExtXmitWait uint32 = 1 << 28
	// SelectXmitDiscardDetails and SelectRcvErrorDetails are every
	// counter of those groups.
	SelectXmitDiscardDetails uint32 = 0xF
	SelectRcvErrorDetails    uint32 = 0x3F
)

// ClearResets are the resets of port p that ibqueryerrors -k (errors)
// and -K (counts) send, given the PMA's capabilities; details adds the
// detail groups to -k.
func ClearResets(p CounterPort, caps *PMACaps, errors, counts, details bool) []CounterReset {
	var rs []CounterReset
	var sel uint32
	if errors {
		sel |= SelectErrors
		if caps.Has(mad.PerfCapMaskXmitWait) {
			sel |= SelectXmitWait
		}
	}
	if counts {
		sel |= SelectData
	}
	if sel != 0 {
		rs = append(rs, CounterReset{Port: p, Attr: mad.LookupStruct("PortCounters"), Select: sel})
	}
	if errors && details {
		rs = append(rs,
			CounterReset{Port: p, Attr: mad.LookupStruct("PortXmitDiscardDetails"), Select: SelectXmitDiscardDetails},
			CounterReset{Port: p, Attr: mad.LookupStruct("PortRcvErrorDetails"), Select: SelectRcvErrorDetails})
	}
	if !caps.Extended() {
		return rs
	}
	sel = 0
	if counts {
		sel = SelectExtDataNoIETF
		if caps.Has(mad.PerfCapMaskExtWidth) {
			sel = SelectExtData
		}
	}
	if errors && caps.ExtendedErrors() {
		sel |= SelectExtErrors
		if caps.Has(mad.PerfCapMaskXmitWait) {
			sel |= SelectExtXmitWait
		}
	}
	if sel != 0 {
		rs = append(rs, CounterReset{Port: p, Attr: mad.LookupStruct("PortCountersExtended"), Select: sel})
	}
	return rs
}

// ResetCounters sends resets, all at once, and returns each one's error
// (nil where it was done). Each goes through Set, so without w every one
// is refused. With dryRun nothing is sent and every error is nil: resets
// is then the list of what would be reset.
func ResetCounters(ctx context.Context, c *Client, w *Write, resets []CounterReset, dryRun bool) []error {
	errs := make([]error, len(resets))
	if dryRun {
		return errs
	}
	var wg sync.WaitGroup
	for i, r := range resets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := c.Set(ctx, w, r.Port.Dest, 0, ResetData(r.Attr, r.Port.Port, r.Select), nil)
			if err != nil {
				errs[i] = &CounterError{Port: r.Port, Attr: r.Attr.Name, Reset: true, Err: err}
			}
		}()
	}
	wg.Wait()
	return errs
}

// ResetData is the data of a Set that resets the counters sel chooses in
// attribute desc of port, as libibmad's performance_reset_via lays it
// out: PortSelect, CounterSelect (sel's low 16 bits) and CounterSelect2
// (the rest), where PortCountersExtended has them for that attribute,
// where PortCounters has them (8 bits) for every other. A sel of 0 is
// every counter.
func ResetData(desc *mad.StructDesc, port int, sel uint32) mad.Struct {
	if sel == 0 {
		sel = ^uint32(0)
	}
	if desc.AttrID == mad.AttrPortCountersExtended {
		return &mad.PortCountersExtended{PortSelect: uint8(port), CounterSelect: uint16(sel), CounterSelect2: sel >> 16}
	}
	pc := &mad.PortCounters{PortSelect: uint8(port), CounterSelect: uint16(sel), CounterSelect2: uint8(sel >> 16)}
	if desc.AttrID == mad.AttrPortCounters {
		return pc
	}
	return AsAttr(desc, pc)
}

// AsAttr is s sent or decoded as attribute desc: libibmad lays some
// PerfMgt MADs out as another attribute than the one they carry (a
// reset's selects sit where PortCounters has them, whatever the
// attribute).
func AsAttr(desc *mad.StructDesc, s mad.Struct) mad.Struct {
	a := &asAttr{s: s, desc: *desc}
	a.desc.Size = max(desc.Size, s.Desc().Size)
	return a
}

type asAttr struct {
	s    mad.Struct
	desc mad.StructDesc
}

func (a *asAttr) Desc() *mad.StructDesc    { return &a.desc }
func (a *asAttr) Marshal(b []byte) error   { return a.s.Marshal(b) }
func (a *asAttr) Unmarshal(b []byte) error { return a.s.Unmarshal(b) }
