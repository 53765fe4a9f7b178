package cmdutil

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/ibtool/ibtool/internal/ctext"
	"github.com/ibtool/ibtool/internal/endport"
	"github.com/ibtool/ibtool/internal/jsonv"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/query"
	"github.com/ibtool/ibtool/internal/rpc"
	"github.com/ibtool/ibtool/internal/sa"
	"github.com/ibtool/ibtool/internal/umad"
)

// TypeFlags are -D/-L/-G as target type checks (only the ones the command
// has: a command that reuses -D for something else leaves it false).
func (c *Common) TypeFlags() endport.TypeFlags {
	return endport.TypeFlags{Direct: c.Direct, LID: c.Lid, GUID: c.Guid}
}

// ResolveCode is the exit status (as "ibtool <cmd>") of a target that
// could not be resolved: a name no node has is a bad argument, as a
// malformed target is (exit 2); anything else is a failure (255).
func ResolveCode(err error) int {
	var nf *query.NameNotFoundError
	if errors.As(err, &nf) {
		return ExitUsage
	}
	return ExitFailure
}

// newResolver builds the SA resolver on the engine's port; -s names the
// SA's LID instead of the port's SM LID. A RoCE port has no SM and no SA:
// its resolver has no SA client and addresses GMPs by GID alone.
func newResolver(eng *rpc.Engine, c *Common) (*sa.Resolver, error) {
	local, err := eng.Port().Info()
	if err != nil {
		return nil, fmt.Errorf("reading the local port: %w", err)
	}
	var smLID uint16
	if c.SMPort != "" {
		if smLID, err = endport.ParseLID(c.SMPort); err != nil {
			return nil, UsageErrorf("-s: %v", err)
		}
	}
	if umad.IsRoCE(local) {
		return &sa.Resolver{Local: local}, nil
	}
	client, err := sa.NewFromPort(eng, smLID, uint16(c.PKeyIdx))
	if err != nil {
		return nil, err
	}
	if c.SAKey != "" {
		if client.SMKey, err = endport.ParseUint(c.SAKey, 64); err != nil {
			return nil, fmt.Errorf("sa_key in ibdiag.conf: %v", err)
		}
	}
	return &sa.Resolver{SA: client, Local: local}, nil
}

// ScopeLocalPort lets a scoped GID target ("fe80::1%rxe1/1") choose the
// local port when neither -C nor -P does: a link-local GID (every RoCE
// port has one, fe80:: and its MAC) only means something on one port, as
// an IPv6 zone does. The scope is a CA name, or anything -P takes ("ca/port",
// a port number, GUID or GID). The resolver checks that the two agree.
func ScopeLocalPort(c *Common, arg string) {
	if c.CA != "" || c.Port != "" {
		return
	}
	t, err := endport.ParseTarget(arg, c.TypeFlags())
	if err != nil || t.Local == "" {
		return
	}
	_, numErr := endport.ParseUint(t.Local, 64)
	_, guidErr := endport.ParseGUID(t.Local)
	_, gidErr := endport.ParseGID(t.Local)
	if strings.Contains(t.Local, "/") || numErr == nil || guidErr == nil || gidErr == nil {
		c.Port = t.Local
	} else {
		c.CA = t.Local
	}
}

// ParseCDRPath is libibmad's str2drpath: comma-separated numbers read with
// atoi (so "abc" is 0 and "8x" is 8), each cut to a byte; an empty string
// is no path (ok false).
func ParseCDRPath(s string) ([]byte, bool) {
	if s == "" {
		return nil, false
	}
	var path []byte
	for {
		item, rest, more := strings.Cut(s, ",")
		path = append(path, byte(ctext.Atoi(item)))
		if !more || rest == "" {
			break
		}
		s = rest
	}
	return path, true
}

// PortNum is -P as a number, for messages.
func PortNum(s string) int {
	v, _ := ctext.Strtoul(s)
	return int(v)
}

// RouteToPortGUID is how the C tool reaches -S/-G: the SA's PathRecord
// gives the port's LID; the route a LID-routed SMP takes to it is then
// followed switch by switch.
func RouteToPortGUID(ctx context.Context, client *query.Client, guid uint64) ([]byte, error) {
	if guid == 0 {
		return nil, errors.New("no GUID")
	}
	d, err := client.SMPDest(ctx, endport.Target{Kind: endport.ByGUID, GUID: guid})
	if err != nil {
		return nil, err
	}
	return client.RouteToLID(ctx, d.LID)
}

// VendorTarget resolves where ibping's and ibsysstat's GMPs go: the SA's
// PathRecord path, or for a LID the SA has no path to, the LID itself (SL
// 0, as the C tools always send them). On RoCE a GID is the only address
// (no SA, no LIDs). The target's text is portid2str's ("Lid 3", "Gid
// fe80::...").
func VendorTarget(ctx context.Context, env *Env, client *query.Client, c *Common, arg string) (query.Dest, jsonv.Target, error) {
	cantResolve := func(err error, code int) error {
		return &Failure{CMsg: "can't resolve destination port " + arg, Err: err, Code: code, Stderr: code == ExitFailure}
	}
	t, err := endport.ParseTargetOrName(arg, c.TypeFlags())
	if err != nil {
		return query.Dest{}, jsonv.Target{}, cantResolve(err, ExitUsage)
	}
	if t.Kind != endport.ByLID {
		d, err := client.GMPDest(ctx, t)
		if err != nil {
			return d, jsonv.Target{}, cantResolve(err, ResolveCode(err))
		}
		return d, vendorTargetJSON(t, d.GMP, d.String()), nil
	}
	d, err := client.GMPDestOrLID(ctx, t.LID)
	if err != nil {
		if r, rerr := client.Resolver(); rerr != nil || umad.IsRoCE(r.Local) {
			return query.Dest{}, jsonv.Target{}, cantResolve(err, ExitFailure)
		}
		if c.Verbose > 0 {
			fmt.Fprintf(env.IO.Err, "ibtool: %v; sending to LID %d directly\n", err, t.LID)
		}
	}
	return d, vendorTargetJSON(t, d.GMP, d.String()), nil
}

// vendorTargetJSON is the target of a GMP sent to addr for t, text the C
// tool's.
func vendorTargetJSON(t endport.Target, addr umad.Address, text string) jsonv.Target {
	jt := jsonv.Target{Route: jsonv.RouteLID, LID: addr.LID, Text: text}
	if addr.LID == 0 && addr.GRH != nil {
		gid := mad.GID(addr.GRH.GID)
		jt.Route, jt.GID = jsonv.RouteGID, &gid
	}
	return WithGiven(jt, t)
}

// WithGiven adds to jt the GUID or GID its target was given as.
func WithGiven(jt jsonv.Target, t endport.Target) jsonv.Target {
	switch t.Kind {
	case endport.ByGUID:
		g := mad.GUID(t.GUID)
		jt.GUID = &g
	case endport.ByGID:
		g := mad.GID(t.GID)
		jt.GID = &g
	}
	return jt
}

// DestTarget is a query layer destination as the vocabulary's target,
// text the C tool's.
func DestTarget(d query.Dest, text string) jsonv.Target {
	t := jsonv.Target{Route: jsonv.RouteLID, LID: d.LID, Text: text}
	switch d.Kind {
	case query.ByDR:
		t.Route, t.DRPath = jsonv.RouteDR, mad.FormatDRPath(d.DRPath)
	case query.ByCombined:
		t.Route, t.DRPath, t.DRSLID = jsonv.RouteCombined, mad.FormatDRPath(d.DRPath), d.DRSLID
	}
	return t
}

// SMPLID is an SMP destination by LID. LID 0 (no LID or SM yet) is the
// local node, by a 0-hop directed route, as libibmad sends it.
func SMPLID(lid uint16) query.Dest {
	if lid == 0 {
		return query.DR([]byte{0})
	}
	return query.LID(lid)
}

// IBResolve parses and resolves a destination as resolve_portid_str does:
// a LID, a directed route (-D), or a GUID/GID whose LID the SA's
// PathRecord gives. A malformed target is a usage error as "ibtool <cmd>".
func IBResolve(ctx context.Context, c *query.Client, cm *Common, arg string) (query.Dest, error) {
	cantResolve := func(err error, code int) error {
		return &Failure{CMsg: "can't resolve destination port " + arg, Err: err, Code: code, Stderr: code == ExitFailure}
	}
	t, err := endport.ParseTargetOrName(arg, cm.TypeFlags())
	if err != nil {
		return query.Dest{}, cantResolve(err, ExitUsage)
	}
	d, err := c.SMPDest(ctx, t)
	if err != nil {
		return d, cantResolve(err, ResolveCode(err))
	}
	return d, nil
}

// VendorOUI is -o: the OUI of the requests sent or served.
func VendorOUI(s string) (uint32, error) {
	if s == "" {
		return mad.OUIOpenIB, nil
	}
	n, err := endport.ParseUint(s, 64)
	if err != nil || n > 0xFFFFFF {
		return 0, UsageErrorf("invalid OUI %q: a number up to 0xffffff", s)
	}
	return uint32(n), nil
}
