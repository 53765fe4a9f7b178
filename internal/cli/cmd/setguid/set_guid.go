package setguid

// set_guid: program alias GUIDs of a port through the SA (python-rdma's
// "ibtool set_guid TARGET SLOT GUID"): a SubnAdmSet of GUIDInfoRecord
// (IBA 15.2.5.18) whose component mask names the port's LID, the block of
// 8 GUIDs and the slots written.
//
// GUID may be a comma-separated list: its GUIDs go into SLOT, SLOT+1, ...
// (one SubnAdmSet per block of 8 slots). GUIDs are 0x-prefixed hex or
// python-rdma's forms (0002:c903:0000:1491, 16 hex digits). Slot 0 is the
// port GUID itself and cannot be aliased.
//
// The write goes through the one write path (query.Client.SetSA; -v logs
// it): the GUID list on the command line asks for it. The SA decides: the
// reply record is the port's GUIDs as the SA now has them (an SM may
// refuse a GUID, or assign one for a 0), and set_guid reports those.
//
// OpenSM under ibsim takes the Set (its reply record has the GUIDs),
// but the SubnSet(GUIDInfo) it then sends the port is refused by ibsim's
// SMA, so the port's GUIDInfo, as smpquery reads it, stays as it was.
//
// Output: "Lid <lid> slot <n>: <guid>" per slot written, as the SA's
// reply has it.
//
// Bad input (exit 2, nothing sent): a malformed GUID in the list (named
// with its position), a repeated GUID, slot 0, a slot past 255.
//
// JSON (--json): {"target", "lid", "slots": [{"slot", "requested_guid",
// "guid"}]}.

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/internal/cli/cmdutil"
	"github.com/ibtool/ibtool/internal/endport"
	"github.com/ibtool/ibtool/internal/jsonv"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/query"
	"github.com/ibtool/ibtool/internal/rpc"
)

// guidsPerBlock is the GUIDs of one GUIDInfo block (IBA 14.2.5.5).
const guidsPerBlock = 8

// NewCmd builds the set_guid command.
func NewCmd(env *cmdutil.Env, _ string) *cobra.Command {
	opts := &cmdutil.Common{}
	cmd := cmdutil.ToolCommand("set_guid [options] <target> <slot> <guid>[,<guid>...]", "Program alias GUIDs of a port through the SA")
	cmd.Long = "set_guid asks the SA (a SubnAdmSet of GUIDInfoRecord) to give the target port alias GUIDs,\n" +
		"in GUID slots <slot>, <slot>+1, ... (slot 0 is the port GUID)."
	cmd.Example = `  set_guid 2 1 0x0002c90300001491
  set_guid 0x0002c90300000001 4 0x0002c9030000a001,0x0002c9030000a002`
	cmdutil.SetupCommon(env, cmd, opts, "K")
	cmd.RunE = func(c *cobra.Command, args []string) error {
		if len(args) != 3 {
			return cmdutil.UsageErrorf("expected <target> <slot> <guid>[,<guid>...]")
		}
		res, err := runSetGUID(env, opts, args)
		return cmdutil.Finish(env, opts, "set_guid", res, err)
	}
	return cmd
}

type guidSlot struct {
	Slot      int      `json:"slot"`
	Requested mad.GUID `json:"requested_guid"`
	GUID      mad.GUID `json:"guid"`
}

type setGUIDResult struct {
	Target jsonv.Target `json:"target"`
	LID    uint16       `json:"lid"`
	Slots  []guidSlot   `json:"slots"`
}

func (r *setGUIDResult) WriteText(w io.Writer) error {
	var b strings.Builder
	for _, s := range r.Slots {
		fmt.Fprintf(&b, "Lid %d slot %d: %s\n", r.LID, s.Slot, s.GUID)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// parseGUIDList reads the comma-separated GUID list.
func parseGUIDList(list string) ([]uint64, error) {
	seen := map[uint64]int{}
	var out []uint64
	for i, item := range strings.Split(list, ",") {
		g, err := parseGUIDArg(strings.TrimSpace(item))
		if err != nil {
			return nil, cmdutil.UsageErrorf("GUID %d of the list %q: %v", i+1, list, err)
		}
		if j, dup := seen[g]; dup {
			return nil, cmdutil.UsageErrorf("GUID %d of the list %q repeats GUID %d (0x%016x)", i+1, list, j+1, g)
		}
		seen[g] = i
		out = append(out, g)
	}
	return out, nil
}

// parseGUIDArg reads a GUID: 0x and up to 16 hex digits, or python-rdma's
// forms.
func parseGUIDArg(s string) (uint64, error) {
	if hex, ok := strings.CutPrefix(strings.ToLower(s), "0x"); ok {
		if hex == "" || len(hex) > 16 {
			return 0, fmt.Errorf("invalid GUID %q: 1 to 16 hex digits after 0x", s)
		}
		v, err := strconv.ParseUint(hex, 16, 64)
		if err != nil {
			return 0, fmt.Errorf("invalid GUID %q: not hex", s)
		}
		return v, nil
	}
	return endport.ParseGUID(s)
}

func runSetGUID(env *cmdutil.Env, opts *cmdutil.Common, args []string) (cmdutil.Result, error) {
	slot, err := endport.ParseUint(args[1], 8)
	if err != nil {
		return nil, cmdutil.UsageErrorf("invalid slot %q: a GUID index 1..255", args[1])
	}
	if slot == 0 {
		return nil, cmdutil.UsageErrorf("slot 0 holds the port GUID itself: alias GUIDs go in slots 1 and up")
	}
	guids, err := parseGUIDList(args[2])
	if err != nil {
		return nil, err
	}
	if int(slot)+len(guids) > 256 {
		return nil, cmdutil.UsageErrorf("%d GUIDs from slot %d run past slot 255", len(guids), slot)
	}
	c, err := cmdutil.OpenClient(env, opts, cmdutil.EngineConfig{Timeout: rpc.DefaultTimeout})
	if err != nil {
		return nil, err
	}
	defer c.Engine().Close()
	ctx := context.Background()
	d, lid, err := setGUIDTarget(ctx, c, opts, args[0])
	if err != nil {
		return nil, err
	}
	res := &setGUIDResult{Target: cmdutil.DestTarget(d, d.String()), LID: lid}
	w := &query.Write{By: "set_guid " + strings.Join(args, " ")}
	for first := 0; first < len(guids); {
		n, err := setGUIDBlock(ctx, c, w, lid, int(slot)+first, guids[first:], res)
		if err != nil {
			return res, err
		}
		first += n
	}
	return res, nil
}

// setGUIDTarget resolves the target port and its LID (the record's key).
func setGUIDTarget(ctx context.Context, c *query.Client, cm *cmdutil.Common, arg string) (query.Dest, uint16, error) {
	d, err := cmdutil.IBResolve(ctx, c, cm, arg)
	if err != nil {
		return d, 0, err
	}
	if d.Kind == query.ByLID {
		return d, d.LID, nil
	}
	var pi mad.PortInfo // the port a directed route arrives on
	if err := c.Get(ctx, d, 0, nil, &pi); err != nil {
		return d, 0, fmt.Errorf("reading the LID of %s: %w", d, err)
	}
	if pi.LID == 0 {
		return d, 0, fmt.Errorf("%s has no LID: the SA keys GUIDInfoRecords by LID", d)
	}
	return d, pi.LID, nil
}

// setGUIDBlock sends the SubnAdmSet of the block holding slot, with as
// many of guids as fit in it, and records the SA's reply; it returns how
// many GUIDs it set.
func setGUIDBlock(ctx context.Context, c *query.Client, w *query.Write, lid uint16, slot int, guids []uint64, res *setGUIDResult) (int, error) {
	rec := mad.GUIDInfoRecord{LID: lid, BlockNum: uint8(slot / guidsPerBlock)}
	fields := []string{"LID", "BlockNum"}
	n := 0
	for idx := slot % guidsPerBlock; idx < guidsPerBlock && n < len(guids); idx++ {
		rec.GUIDInfo.GUID[idx] = mad.GUID(guids[n])
		fields = append(fields, fmt.Sprintf("GUIDInfo.GUID.%d", idx))
		n++
	}
	mask, err := mad.CompMask(rec.Desc(), fields...)
	if err != nil {
		return 0, err // cannot happen: the fields are the record's
	}
	var after mad.GUIDInfoRecord
	if err := c.SetSA(ctx, w, &rec, mask, &after); err != nil {
		return 0, fmt.Errorf("block %d of Lid %d: %w", rec.BlockNum, lid, err)
	}
	for i := 0; i < n; i++ {
		idx := slot%guidsPerBlock + i
		res.Slots = append(res.Slots, guidSlot{Slot: slot + i, Requested: mad.GUID(guids[i]), GUID: after.GUIDInfo.GUID[idx]})
	}
	return n, nil
}
