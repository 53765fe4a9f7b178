package ibaddr

// ibaddr: the GID and LID range of a port (infiniband-diags 44's ibaddr):
// NodeInfo for the port GUID, then PortInfo for the GID prefix, LID and
// LMC, printed as "GID fe80::10:1 LID start 0x2 end 0x2".
//
// Target: the local port by default (LID routed to its own LID, or a 0-hop
// directed route while it has none); a LID, a directed route (-D) or a
// port GUID (-G, through the SA). There is no -L/--Lid target flag (LIDs
// are the default anyway): ibaddr's -L is --Lid_show. A second argument is
// the port number
// the PortInfo is read for (C reads it too, though its usage does not say):
// the GUID stays the one of the port the SMP arrived on.
//
// -g prints the GID only, -l the LID range only (hex), -L the LID range
// in decimal; without them both. The GID is printed as glibc's inet_ntop
// does (a zero prefix gives the IPv4-compatible form "::0.16.0.1").
//
// Failures as sminfo's: the C tool's IBEXIT line on stdout in compat use
// ("ibaddr: iberror: failed: can't resolve requested address"), one line
// on stderr as "ibtool ibaddr".
//
// Deliberate differences: -l after -L gives decimal too (C: the last -L
// sets -100 and each -l adds one, so only a hundred -l's would get hex
// back); the port number must be a number (C's strtoul reads "x" as 0).
//
// JSON (--json): {"target" (docs/json.md's target; text portid2str),
// "port", "gid", "gid_prefix", "port_guid", "lid_start", "lid_end", "lmc"};
// the LIDs are numbers.

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/internal/cli/cmdutil"
	"github.com/ibtool/ibtool/internal/ctext"
	"github.com/ibtool/ibtool/internal/endport"
	"github.com/ibtool/ibtool/internal/jsonv"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/query"
	"github.com/ibtool/ibtool/internal/rpc"
)

type ibaddrOptions struct {
	cmdutil.Common
	showGID, showLIDDec bool
	showLID             int
}

// NewCmd builds the ibaddr command.
func NewCmd(env *cmdutil.Env, _ string) *cobra.Command {
	opts := &ibaddrOptions{}
	cmd := cmdutil.ToolCommand("ibaddr [options] [<lid|dr_path|guid> [port]]", "Show the GID and LID range of a port")
	cmd.Example = `  ibaddr                  # local port's address
  ibaddr 32               # show lid range and gid of lid 32
  ibaddr -G 0x8f1040023   # same but using guid address
  ibaddr -l 32            # show lid range only
  ibaddr -L 32            # show decimal lid range only
  ibaddr -g 32            # show gid address only`
	fs := cmd.Flags()
	fs.BoolVarP(&opts.showGID, "gid_show", "g", false, "show gid address only")
	fs.CountVarP(&opts.showLID, "lid_show", "l", "show lid range only")
	fs.BoolVarP(&opts.showLIDDec, "Lid_show", "L", false, "show lid range (in decimal) only")
	cmdutil.SetupCommon(env, cmd, &opts.Common, "KL")
	cmd.RunE = func(c *cobra.Command, args []string) error {
		res, err := runIbaddr(env, opts, args)
		return cmdutil.Finish(env, &opts.Common, "ibaddr", res, err)
	}
	return cmd
}

// ibaddrResult is ibaddr's result: its JSON, and -g/-l/-L for the text.
type ibaddrResult struct {
	Target    jsonv.Target `json:"target"`
	Port      int          `json:"port"`
	GID       mad.GID      `json:"gid"`
	GIDPrefix string       `json:"gid_prefix"`
	PortGUID  mad.GUID     `json:"port_guid"`
	LIDStart  int          `json:"lid_start"`
	LIDEnd    int          `json:"lid_end"`
	LMC       int          `json:"lmc"`

	showGID, showLID, decimal bool
}

func runIbaddr(env *cmdutil.Env, opts *ibaddrOptions, args []string) (cmdutil.Result, error) {
	port := -1
	if len(args) > 1 {
		n, err := endport.ParseUint(args[1], 8)
		if err != nil {
			return nil, cmdutil.UsageErrorf("invalid port number %q: %v", args[1], err)
		}
		port = int(n)
	}
	c, err := cmdutil.IBOpenClient(env, &opts.Common, cmdutil.EngineConfig{Timeout: rpc.DefaultTimeout})
	if err != nil {
		return nil, err
	}
	defer c.Engine().Close()
	ctx := context.Background()

	var d query.Dest
	if len(args) > 0 {
		if d, err = cmdutil.IBResolve(ctx, c, &opts.Common, args[0]); err != nil {
			return nil, err
		}
	} else {
		local, err := c.Local()
		if err != nil {
			return nil, &cmdutil.Failure{CMsg: "can't resolve self port (null)", Err: fmt.Errorf("reading the local port: %w", err), Stderr: true}
		}
		d = cmdutil.SMPLID(local.LID)
		if port < 0 {
			port = local.Num
		}
	}
	port = max(port, 0)

	var ni mad.NodeInfo
	var pi mad.PortInfo
	err = c.Get(ctx, d, 0, nil, &ni)
	if err == nil {
		err = c.Get(ctx, d, uint32(port), nil, &pi)
	}
	if err != nil {
		return nil, cmdutil.SMPFailed("can't resolve requested address", "", d, err)
	}
	var gid [16]byte
	binary.BigEndian.PutUint64(gid[:8], pi.GIDPrefix)
	binary.BigEndian.PutUint64(gid[8:], uint64(ni.PortGUID))
	res := &ibaddrResult{
		Target:    cmdutil.DestTarget(d, d.String()),
		Port:      port,
		GID:       gid,
		GIDPrefix: fmt.Sprintf("0x%016x", pi.GIDPrefix),
		PortGUID:  ni.PortGUID,
		LIDStart:  int(pi.LID),
		LIDEnd:    int(pi.LID) + 1<<pi.LMC - 1,
		LMC:       int(pi.LMC),
		showGID:   opts.showGID,
		showLID:   opts.showLID > 0 || opts.showLIDDec,
		decimal:   opts.showLIDDec,
	}
	if !res.showGID && !res.showLID {
		res.showGID, res.showLID = true, true
	}
	return res, nil
}

func (r *ibaddrResult) WriteText(w io.Writer) error {
	var b strings.Builder
	if r.showGID {
		fmt.Fprintf(&b, "GID %s ", ctext.InetNtop6(r.GID))
	}
	switch {
	case r.showLID && r.decimal:
		fmt.Fprintf(&b, "LID start %d end %d", r.LIDStart, r.LIDEnd)
	case r.showLID:
		fmt.Fprintf(&b, "LID start 0x%x end 0x%x", r.LIDStart, r.LIDEnd)
	}
	b.WriteByte('\n')
	_, err := io.WriteString(w, b.String())
	return err
}
