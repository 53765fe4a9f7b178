// Package query is the layer between the MAD engine and the commands.
//
// A Client does typed Gets and Sets of any generated attribute (internal/mad)
// on any destination: SMPs LID routed, directed routed or both (combined),
// with the M_Key in every SMP; GMPs on the SA's PathRecord to the target
// where there is an SM, by GID on RoCE. A MAD status is turned into an
// error that names the request. FanOut runs many Gets at once through the
// engine's windows and gives every item its own result or error. Source
// (source.go) is where a fabric-wide command gets its fabric: a live SMP
// walk, the SA's records, or an ibnetdiscover cache.
//
// Every Set goes through Client.Set, which refuses without a Write (the
// command's explicit permission) and logs what it changes.
package query

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync"

	"github.com/ibtool/ibtool/internal/endport"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/nodename"
	"github.com/ibtool/ibtool/internal/rpc"
	"github.com/ibtool/ibtool/internal/sa"
	"github.com/ibtool/ibtool/internal/umad"
)

// Options are what every request of a command carries.
type Options struct {
	// MKey is put in every SMP (IBA 14.2.1.1).
	MKey uint64
	// SMLID, when not 0, is the LID of the SA instead of the local port's
	// SM LID (the C tools' -s).
	SMLID uint16
	// PKeyIndex, when not 0, replaces the P_Key index of GMP paths (-Y).
	PKeyIndex uint16
	// SAKey is the SA's SM_Key (ibdiag.conf sa_key).
	SAKey uint64
	// Names is the node-name-map that node names on the command line are
	// looked up in (besides NodeDescriptions); nil for none.
	Names *nodename.Map
	// CCKey is put in every congestion control MAD (IBA A10.4.1).
	CCKey uint64
	// Log, if set, receives one line per fabric write (-v).
	Log func(format string, args ...any)
}

// Client sends a command's queries on one engine.
type Client struct {
	eng  *rpc.Engine
	opts Options

	once     sync.Once
	resolver *sa.Resolver
	resErr   error
}

// New returns a Client on eng.
func New(eng *rpc.Engine, opts Options) *Client { return &Client{eng: eng, opts: opts} }

// Engine is the client's MAD engine.
func (c *Client) Engine() *rpc.Engine { return c.eng }

// Options are the client's options.
func (c *Client) Options() Options { return c.opts }

// Local describes the local port, re-read from the transport.
func (c *Client) Local() (umad.PortInfo, error) { return c.eng.Port().Info() }

// Resolver is the SA resolver on the client's port, made on first use. A
// RoCE port has no SM: its resolver has no SA client and addresses GMPs
// by GID alone.
func (c *Client) Resolver() (*sa.Resolver, error) {
	c.once.Do(func() { c.resolver, c.resErr = c.newResolver() })
	return c.resolver, c.resErr
}

func (c *Client) newResolver() (*sa.Resolver, error) {
	local, err := c.Local()
	if err != nil {
		return nil, fmt.Errorf("reading the local port: %w", err)
	}
	if umad.IsRoCE(local) {
		return &sa.Resolver{Local: local}, nil
	}
	client, err := sa.NewFromPort(c.eng, c.opts.SMLID, c.opts.PKeyIndex)
	if err != nil {
		return nil, err
	}
	client.SMKey = c.opts.SAKey
	return &sa.Resolver{SA: client, Local: local}, nil
}

// RouteKind says how an SMP travels (IBA 14.2.2).
type RouteKind uint8

const (
	ByLID      RouteKind = iota // LID routed
	ByDR                        // directed route from the local port
	ByCombined                  // LID routed to LID, then directed from there
)

// Dest is where a MAD goes: a route for SMPs, an address for GMPs.
// SMP routes and GMP addresses are resolved differently (a GUID target is
// a LID for an SMP but a PathRecord for a GMP), so a Dest says which one
// it has; the other is zero.
type Dest struct {
	Kind   RouteKind
	LID    uint16 // ByLID, ByCombined: the LID the SMP is routed to
	DRPath []byte // ByDR, ByCombined: the directed route, starting with 0
	DRSLID uint16 // ByCombined: the local port's LID (DrSLID)
	// GMP is the address of GMPs: QP1, Q_Key, SL and P_Key index from the
	// path. Its LID is 0 for an SMP-only Dest.
	GMP umad.Address
}

// LID is an SMP destination by LID.
func LID(lid uint16) Dest { return Dest{Kind: ByLID, LID: lid} }

// DR is an SMP destination by directed route.
func DR(path []byte) Dest { return Dest{Kind: ByDR, DRPath: path} }

// Combined is an SMP routed by LID to lid, then by path from there;
// slid is the local port's LID.
func Combined(lid uint16, path []byte, slid uint16) Dest {
	return Dest{Kind: ByCombined, LID: lid, DRPath: path, DRSLID: slid}
}

// GMPAddr is a GMP destination.
func GMPAddr(a umad.Address) Dest { return Dest{Kind: ByLID, LID: a.LID, GMP: a} }

// String names the destination the way libibmad's portid2str does.
func (d Dest) String() string {
	switch d.Kind {
	case ByDR:
		return "DR path slid 65535; dlid 65535; " + mad.FormatDRPath(d.DRPath)
	case ByCombined:
		if len(d.DRPath) < 2 { // no hops: portid2str shows the LID alone
			return fmt.Sprintf("Lid %d", d.LID)
		}
		return fmt.Sprintf("Lid %d DR path slid %d; dlid 65535; %s", d.LID, d.DRSLID, mad.FormatDRPath(d.DRPath))
	}
	if d.GMP.GRH != nil && d.GMP.LID == 0 {
		return "Gid " + mad.GID(d.GMP.GRH.GID).String()
	}
	return fmt.Sprintf("Lid %d", d.LID)
}

// SMPDest resolves a target for SMPs: LIDs and directed routes as they
// are, a GUID or GID to the LID of the SA's PathRecord to it (as
// libibmad's ib_path_query).
func (c *Client) SMPDest(ctx context.Context, t endport.Target) (Dest, error) {
	t, err := c.ResolveName(ctx, t, c.opts.Names, nil)
	if err != nil {
		return Dest{}, err
	}
	switch t.Kind {
	case endport.ByLID:
		return LID(t.LID), nil
	case endport.ByDRPath:
		return DR(t.DRPath), nil
	}
	r, err := c.Resolver()
	if err != nil {
		return Dest{}, err
	}
	lid, err := r.SMPLID(ctx, t)
	if err != nil {
		return Dest{}, err
	}
	return LID(lid), nil
}

// GMPDest resolves a target for GMPs: the SA's PathRecord to it on
// InfiniBand (right SL, P_Key and lifetime), its GID on RoCE. -Y replaces
// the path's P_Key index.
func (c *Client) GMPDest(ctx context.Context, t endport.Target) (Dest, error) {
	t, err := c.ResolveName(ctx, t, c.opts.Names, nil)
	if err != nil {
		return Dest{}, err
	}
	r, err := c.Resolver()
	if err != nil {
		return Dest{}, err
	}
	p, err := r.GMP(ctx, t)
	if err != nil {
		return Dest{}, err
	}
	return GMPAddr(c.gmpAddr(p.Addr)), nil
}

// GMPDestOrLID is GMPDest for a LID, falling back to the LID itself on SL 0
// when the SA gives no path (the C tools never ask the SA for a LID). The
// error from the SA is returned with the fallback, for -v.
func (c *Client) GMPDestOrLID(ctx context.Context, lid uint16) (Dest, error) {
	d, err := c.GMPDest(ctx, endport.Target{Kind: endport.ByLID, LID: lid})
	if err == nil {
		return d, nil
	}
	return GMPAddr(c.gmpAddr(umad.Address{LID: lid, QP: 1, QKey: umad.QP1QKey})), err
}

func (c *Client) gmpAddr(a umad.Address) umad.Address {
	if c.opts.PKeyIndex != 0 {
		a.PKeyIndex = c.opts.PKeyIndex
	}
	return a
}

// Request builds the MAD that asks method of attr at d: an SMP (with the
// M_Key) for SMP attributes, a GMP of class otherwise. data, when not nil,
// is the attribute data of the request.
func (c *Client) Request(d Dest, class, method uint8, attr uint16, mod uint32, data []byte) (*rpc.Request, error) {
	req := &rpc.Request{MAD: make(mad.Header, mad.Size)}
	if err := c.initRequest(req, d, class, method, attr, mod); err != nil {
		return nil, err
	}
	copy(req.MAD[requestDataOffset(class, attr):], data)
	return req, nil
}

// initRequest makes req the request Request describes, without its data:
// req.MAD is mad.Size bytes of zeros, the rest of req its zero value.
func (c *Client) initRequest(req *rpc.Request, d Dest, class, method uint8, attr uint16, mod uint32) error {
	m := req.MAD
	switch {
	case class == mad.ClassSubnLID || class == mad.ClassSubnDR:
		switch d.Kind {
		case ByDR:
			req.Addr = umad.Address{LID: umad.PermissiveLID}
			mad.InitDRSMP(m, method, attr, mod, d.DRPath)
		case ByCombined:
			req.Addr = umad.Address{LID: d.LID}
			mad.InitDRSMP(m, method, attr, mod, d.DRPath)
			binary.BigEndian.PutUint16(m[32:], d.DRSLID) // DrSLID: LID routed up to the path's start
		default:
			req.Addr = umad.Address{LID: d.LID}
			mad.InitLIDSMP(m, method, attr, mod)
		}
		binary.BigEndian.PutUint64(m[24:], c.opts.MKey) // M_Key (IBA 14.2.1.1)
	default:
		if d.GMP.QP == 0 {
			return fmt.Errorf("no GMP address for %s", d)
		}
		req.Addr = d.GMP
		mad.InitRequest(m, class, classVersion(class), method, attr, mod)
		if class >= 0x30 && class <= 0x4f {
			// Vendor range 2 MADs carry an OUI (IBA 13.4.4); the
			// ones ibtool speaks are OpenIB's.
			oui := uint32(mad.OUIOpenIB)
			m[37], m[38], m[39] = byte(oui>>16), byte(oui>>8), byte(oui)
		}
		if class == mad.ClassCongest {
			binary.BigEndian.PutUint64(m[24:], c.opts.CCKey) // CC_Key (IBA A10.4.1)
		}
	}
	return nil
}

// requestDataOffset is where a request's attribute data starts.
func requestDataOffset(class uint8, attr uint16) int {
	if class == mad.ClassSubnLID || class == mad.ClassSubnDR {
		return mad.SMPDataOffset
	}
	return mad.AttrDataOffset(class, attr)
}

// classVersion is the class version ibtool speaks for a class: 2 for the
// SA (IBA 15.2.1.1) and congestion control (IBA A10.4.1), as libibmad.
func classVersion(class uint8) uint8 {
	if class == mad.ClassSubnAdm || class == mad.ClassCongest {
		return 2
	}
	return 1
}

// Do sends req and returns its reply. A non-zero MAD status (for SMPs, the
// 15 bits below the DR direction bit, as libibmad checks) is a
// *rpc.StatusError naming the request.
func (c *Client) Do(ctx context.Context, req *rpc.Request) (mad.Header, error) {
	reply, err := c.eng.Do(ctx, req)
	if err != nil {
		return nil, err
	}
	if status(reply.MAD) != 0 {
		return nil, &rpc.StatusError{Addr: req.Addr, Req: req.MAD, Reply: reply.MAD}
	}
	return reply.MAD, nil
}

func status(m mad.Header) uint16 {
	s := m.Status()
	if m.Class() == mad.ClassSubnDR {
		s &^= mad.DirectionBit
	}
	return s
}

// attrData is the attribute data of a reply of class.
func attrData(m mad.Header) []byte {
	if m.Class() == mad.ClassSubnLID || m.Class() == mad.ClassSubnDR {
		return m.SMPData()
	}
	return m[mad.AttrDataOffset(m.Class(), m.AttrID()):]
}

// Get reads out's attribute at d with attribute modifier mod and decodes
// the reply into out. in, when not nil, is the request's attribute data
// (PerfMgt counters name their port in it).
func (c *Client) Get(ctx context.Context, d Dest, mod uint32, in, out mad.Struct) error {
	req, err := c.getRequest(d, mod, in, out)
	return c.getInto(ctx, req, err, out)
}

// GetClass is Get for an attribute that several classes carry
// (ClassPortInfo): class names the one to ask.
func (c *Client) GetClass(ctx context.Context, class uint8, d Dest, mod uint32, in, out mad.Struct) error {
	req, err := c.Request(d, class, mad.MethodGet, out.Desc().AttrID, mod, encode(in))
	return c.getInto(ctx, req, err, out)
}

// getInto sends req (unless building it failed) and decodes its reply.
func (c *Client) getInto(ctx context.Context, req *rpc.Request, err error, out mad.Struct) error {
	if err != nil {
		return err
	}
	reply, err := c.Do(ctx, req)
	if err != nil {
		return err
	}
	return out.Unmarshal(attrData(reply))
}

func (c *Client) getRequest(d Dest, mod uint32, in, out mad.Struct) (*rpc.Request, error) {
	class, err := ClassOf(out.Desc(), d)
	if err != nil {
		return nil, err
	}
	return c.Request(d, class, mad.MethodGet, out.Desc().AttrID, mod, encode(in))
}

func encode(s mad.Struct) []byte {
	if s == nil {
		return nil
	}
	return mad.Encode(s)
}

// ClassOf is the class that carries attribute desc to d: SMPs for SMP
// attributes (unless d is a GMP address and the attribute also has a GMP
// class), otherwise its one GMP class.
func ClassOf(desc *mad.StructDesc, d Dest) (uint8, error) {
	if !desc.IsAttribute {
		return 0, fmt.Errorf("%s is not a MAD attribute", desc.Name)
	}
	var gmp []uint8
	smp := false
	for _, cl := range desc.Classes {
		if cl == mad.ClassSubnLID || cl == mad.ClassSubnDR {
			smp = true
		} else {
			gmp = append(gmp, cl)
		}
	}
	switch {
	case smp && (d.GMP.QP == 0 || len(gmp) == 0):
		return mad.ClassSubnLID, nil
	case len(gmp) == 1:
		return gmp[0], nil
	case len(gmp) == 0:
		return 0, fmt.Errorf("%s has no management class", desc.Name)
	}
	return 0, fmt.Errorf("%s travels in several classes: name one (GetClass)", desc.Name)
}
