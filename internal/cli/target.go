package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/ibtool/ibtool/internal/endport"
	"github.com/ibtool/ibtool/internal/query"
	"github.com/ibtool/ibtool/internal/rpc"
	"github.com/ibtool/ibtool/internal/sa"
	"github.com/ibtool/ibtool/internal/umad"
)

// typeFlags are -D/-L/-G as target type checks (only the ones the command
// has: a command that reuses -D for something else leaves it false).
func (c *Common) typeFlags() endport.TypeFlags {
	return endport.TypeFlags{Direct: c.Direct, LID: c.Lid, GUID: c.Guid}
}

// resolveCode is the exit status (as "ibtool <cmd>") of a target that
// could not be resolved: a name no node has is a bad argument, as a
// malformed target is (exit 2); anything else is a failure (255).
func resolveCode(err error) int {
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
