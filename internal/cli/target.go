package cli

import (
	"context"
	"fmt"

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
// SA's LID instead of the port's SM LID.
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

// gmpPath resolves where a GMP to target goes, always through the SA's
// PathRecord (right SL, P_Key index and lifetime); an empty target is the
// local port.
func gmpPath(ctx context.Context, eng *rpc.Engine, c *Common, target string) (*sa.Path, error) {
	r, err := newResolver(eng, c)
	if err != nil {
		return nil, err
	}
	t := endport.Target{Kind: endport.ByLID, LID: r.Local.LID}
	if target != "" {
		if t, err = parseTarget(c, target); err != nil {
			return nil, err
		}
	}
	return r.GMP(ctx, t)
}
