package sminfo

// sminfo: the SMInfo of a subnet manager (infiniband-diags 44's sminfo),
// and SubnSet(SMInfo) when an attribute modifier asks for it.
//
// Target: the local port's SM LID by default; a LID, a directed route (-D)
// or a port GUID (-G, through the SA). With no SM LID yet (0) the query
// goes to the local node over a 0-hop directed route, as libibmad does for
// LID 0.
//
// Writes: only an attribute modifier other than 0 ("sminfo <lid> <mod>",
// the SMInfo control code: 1 handover, 2 acknowledge, 3 disable, 4
// standby, 5 discover) sends a SubnSet, carrying -s state, -p priority and
// -a activity count (defaults 2/STANDBY, 0, 0). Without a modifier they
// only fill the Get's payload, which SMs ignore, as in the C tool. -v
// logs the Set on stderr.
//
// Output: "sminfo: sm lid 1 sm guid 0x200000, activity count 8 priority 0
// state 3 SMINFO_MASTER", where the LID is the target's (0 for a directed
// route), the fields those of the reply.
//
// Failures: in compat use (invoked as "sminfo") the C tool's IBEXIT line on
// stdout ("sminfo: iberror: failed: query") and exit 255; our explanation
// goes to stderr when the C tool writes there too (timeouts) or with
// -v/-e/-d. As "ibtool sminfo" one line on stderr.
//
// Deliberate differences from the C tool: the modifier and the -s/-p/-a
// values must be numbers that fit (C's atoi/strtoul read "x" as 0, so a
// mistyped modifier silently becomes a Get; C takes "0x3" as 0 too, ibtool
// as 3); a non-numeric -y is an error (C prompts).
//
// JSON (--json): {"sm_lid" (the target's LID, 0 for a DR path), "target"
// (docs/json.md's target; text libibmad's portid2str: "Lid 1", "DR path
// slid 65535; dlid 65535; 0"), "method" ("Get"|"Set"), "modifier", "guid",
// "activity_count", "priority", "state", "state_text"}. The SM_Key is never shown (sminfo
// has no -K).

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/internal/cli/cmdutil"
	"github.com/ibtool/ibtool/internal/endport"
	"github.com/ibtool/ibtool/internal/jsonv"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/query"
	"github.com/ibtool/ibtool/internal/rpc"
)

type sminfoOptions struct {
	cmdutil.Common
	state, priority, activity string
}

// NewCmd builds the sminfo command.
func NewCmd(env *cmdutil.Env, _ string) *cobra.Command {
	opts := &sminfoOptions{}
	cmd := cmdutil.ToolCommand("sminfo [options] [<sm_lid|sm_dr_path> [modifier]]", "Query (or set) the subnet manager's SMInfo")
	cmd.Long = "sminfo asks the subnet manager for its SMInfo: GUID, activity count, priority and state.\n" +
		"A non-zero attribute modifier sends a SubnSet(SMInfo) instead (the SM control code:\n" +
		"1 handover, 2 acknowledge, 3 disable, 4 standby, 5 discover) with -s, -p and -a as its payload."
	cmd.Example = `  sminfo                 # the local port's SM
  sminfo 1               # the SM at LID 1
  sminfo -D 0            # the SM on the local node, by directed route
  sminfo -p 5 -s 2 1 4   # SubnSet(SMInfo) control code 4 (standby) to LID 1`
	fs := cmd.Flags()
	fs.StringVarP(&opts.state, "state", "s", "", "set SM state <0-3> (sent with a Set)")
	fs.StringVarP(&opts.priority, "priority", "p", "", "set SM priority <0-15> (sent with a Set)")
	fs.StringVarP(&opts.activity, "activity", "a", "", "set activity count (sent with a Set)")
	cmdutil.SetupCommon(env, cmd, &opts.Common, "sK")
	cmd.RunE = func(c *cobra.Command, args []string) error {
		res, err := runSminfo(env, opts, args)
		return cmdutil.Finish(env, &opts.Common, "sminfo", res, err)
	}
	return cmd
}

var smStateNames = []string{"SMINFO_NOTACT", "SMINFO_DISCOVER", "SMINFO_STANDBY", "SMINFO_MASTER"}

// sminfoResult is sminfo's result: its JSON, and the C tool's line.
type sminfoResult struct {
	SMLID         uint16       `json:"sm_lid"`
	Target        jsonv.Target `json:"target"`
	Method        string       `json:"method"`
	Modifier      uint32       `json:"modifier"`
	GUID          mad.GUID     `json:"guid"`
	ActivityCount uint32       `json:"activity_count"`
	Priority      uint8        `json:"priority"`
	State         uint8        `json:"state"`
	StateText     string       `json:"state_text"`
}

func (r *sminfoResult) WriteText(w io.Writer) error {
	_, err := fmt.Fprintf(w, "sminfo: sm lid %d sm guid 0x%x, activity count %d priority %d state %d %s\n",
		r.SMLID, uint64(r.GUID), r.ActivityCount, r.Priority, r.State, r.StateText)
	return err
}

func runSminfo(env *cmdutil.Env, opts *sminfoOptions, args []string) (cmdutil.Result, error) {
	// The payload: what a Set asks for (C's defaults: standby, 0, 0).
	info := mad.SMInfo{SMState: mad.SMState(2)}
	for _, v := range []struct {
		name, text string
		max        uint64
		set        func(uint64)
	}{
		{"state", opts.state, 3, func(n uint64) { info.SMState = mad.SMState(n) }},
		{"priority", opts.priority, 15, func(n uint64) { info.Priority = uint8(n) }},
		{"activity", opts.activity, 1<<32 - 1, func(n uint64) { info.ActCount = uint32(n) }},
	} {
		if v.text == "" {
			continue
		}
		n, err := endport.ParseUint(v.text, 64)
		if err != nil || n > v.max {
			return nil, cmdutil.UsageErrorf("invalid %s %q: a number 0..%d", v.name, v.text, v.max)
		}
		v.set(n)
	}
	var mod uint32
	if len(args) > 1 {
		n, err := endport.ParseUint(args[1], 32)
		if err != nil {
			return nil, cmdutil.UsageErrorf("invalid attribute modifier %q: %v", args[1], err)
		}
		mod = uint32(n)
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
			return nil, &cmdutil.Failure{CMsg: "can't resolve sm port (null)", Err: fmt.Errorf("reading the local port: %w", err), Stderr: true}
		}
		d = cmdutil.SMPLID(local.SMLID)
	}

	res := &sminfoResult{SMLID: d.LID, Target: cmdutil.DestTarget(d, d.String()), Method: "Get", Modifier: mod}
	var got mad.SMInfo
	if mod == 0 {
		err = c.Get(ctx, d, mod, &info, &got) // SMs ignore the payload of a Get
	} else {
		// A modifier is the SM control code sminfo was asked to send.
		res.Method = "Set"
		err = c.Set(ctx, &query.Write{By: fmt.Sprintf("sminfo modifier %d", mod)}, d, mod, &info, &got)
	}
	if err != nil {
		return nil, cmdutil.SMPFailed("query", "", d, err)
	}
	res.GUID, res.ActivityCount, res.Priority = got.GUID, got.ActCount, got.Priority
	res.State, res.StateText = uint8(got.SMState), "???"
	if int(res.State) < len(smStateNames) {
		res.StateText = smStateNames[res.State]
	}
	return res, nil
}

// The rest of this file is shared by sminfo, ibaddr, ibportstate, ibping
// and ibsysstat: failures reported the way infiniband-diags does, and
// targets resolved as libibmad's resolve_portid_str.
