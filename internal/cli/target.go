package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/ibtool/ibtool/internal/endport"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/rpc"
	"github.com/ibtool/ibtool/internal/sa"
	"github.com/ibtool/ibtool/internal/umad"
)

// typeFlags are -D/-L/-G as target type checks (only the ones the command
// has: a command that reuses -D for something else leaves it false).
func (c *Common) typeFlags() endport.TypeFlags {
	return endport.TypeFlags{Direct: c.Direct, LID: c.Lid, GUID: c.Guid}
}

// parseTarget parses a destination argument; a malformed one is a usage
// error.
func parseTarget(c *Common, s string) (endport.Target, error) {
	t, err := endport.ParseTarget(s, c.typeFlags())
	if err != nil {
		return t, usageErrorf("%v", err)
	}
	return t, nil
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
			return nil, usageErrorf("-s: %v", err)
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

// smpRequest addresses an SMP to a target: LID routed, directed route, or
// (GUID, GID) LID routed to the LID the SA's PathRecord gives.
func smpRequest(ctx context.Context, eng *rpc.Engine, c *Common, t endport.Target, method uint8, attr uint16, mod uint32) (*rpc.Request, error) {
	switch t.Kind {
	case endport.ByDRPath:
		return &rpc.Request{Addr: umad.Address{LID: umad.PermissiveLID}, MAD: mad.NewDRSMP(method, attr, mod, t.DRPath)}, nil
	case endport.ByLID:
		return &rpc.Request{Addr: umad.Address{LID: t.LID}, MAD: mad.NewLIDSMP(method, attr, mod)}, nil
	}
	r, err := newResolver(eng, c)
	if err != nil {
		return nil, err
	}
	lid, err := r.SMPLID(ctx, t)
	if err != nil {
		return nil, err
	}
	return &rpc.Request{Addr: umad.Address{LID: lid}, MAD: mad.NewLIDSMP(method, attr, mod)}, nil
}

// gmpPath resolves where a GMP to target goes: on InfiniBand always
// through the SA's PathRecord (right SL, P_Key index and lifetime), on
// RoCE straight to the target GID; an empty target is the local port.
func gmpPath(ctx context.Context, eng *rpc.Engine, c *Common, target string) (*sa.Path, error) {
	r, err := newResolver(eng, c)
	if err != nil {
		return nil, err
	}
	t := r.LocalTarget()
	if target != "" {
		if t, err = parseTarget(c, target); err != nil {
			return nil, err
		}
	}
	return r.GMP(ctx, t)
}

// scopeLocalPort lets a scoped GID target ("fe80::1%rxe1/1") choose the
// local port when neither -C nor -P does: a link-local GID (every RoCE
// port has one, fe80:: and its MAC) only means something on one port, as
// an IPv6 zone does. The scope is a CA name, or anything -P takes ("ca/port",
// a port number, GUID or GID). The resolver checks that the two agree.
func scopeLocalPort(c *Common, arg string) {
	if c.CA != "" || c.Port != "" {
		return
	}
	t, err := endport.ParseTarget(arg, c.typeFlags())
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
