package cli

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
// only fill the Get's payload, which SMs ignore, as in the C tool.
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
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/internal/endport"
	"github.com/ibtool/ibtool/internal/jsonv"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/rpc"
	"github.com/ibtool/ibtool/internal/umad"
)

func init() { register(newSminfoCmd) }

type sminfoOptions struct {
	Common
	state, priority, activity string
}

func newSminfoCmd(env *Env) *cobra.Command {
	opts := &sminfoOptions{}
	cmd := toolCommand("sminfo [options] [<sm_lid|sm_dr_path> [modifier]]", "Query (or set) the subnet manager's SMInfo")
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
	setupCommon(env, cmd, &opts.Common, "sK")
	cmd.RunE = func(c *cobra.Command, args []string) error {
		return ibFail(env, &opts.Common, "sminfo", runSminfo(env, opts, args))
	}
	return cmd
}

var smStateNames = []string{"SMINFO_NOTACT", "SMINFO_DISCOVER", "SMINFO_STANDBY", "SMINFO_MASTER"}

// sminfoResult is sminfo's JSON output.
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

func runSminfo(env *Env, opts *sminfoOptions, args []string) error {
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
			return usageErrorf("invalid %s %q: a number 0..%d", v.name, v.text, v.max)
		}
		v.set(n)
	}
	var mod uint32
	if len(args) > 1 {
		n, err := endport.ParseUint(args[1], 32)
		if err != nil {
			return usageErrorf("invalid attribute modifier %q: %v", args[1], err)
		}
		mod = uint32(n)
	}
	mkey, err := ibMKey(&opts.Common)
	if err != nil {
		return err
	}
	eng, err := ibOpen(env, &opts.Common)
	if err != nil {
		return err
	}
	defer eng.Close()
	ctx := context.Background()

	var dest ibPortID
	if len(args) > 0 {
		if dest, err = ibResolve(ctx, eng, &opts.Common, args[0]); err != nil {
			return err
		}
	} else {
		local, err := eng.Port().Info()
		if err != nil {
			return &ibFailure{cmsg: "can't resolve sm port (null)", err: fmt.Errorf("reading the local port: %w", err), stderr: true}
		}
		dest = ibPortID{LID: local.SMLID}
	}

	method, methodName := uint8(mad.MethodGet), "Get"
	if mod != 0 {
		method, methodName = mad.MethodSet, "Set"
	}
	data, err := ibSMP(ctx, eng, dest, method, mad.AttrSMInfo, mod, mkey, mad.Encode(&info))
	if err != nil {
		return &ibFailure{cmsg: "query", err: err, stderr: ibWarns(err)}
	}
	var got mad.SMInfo
	if err := got.Unmarshal(data); err != nil {
		return &ibFailure{cmsg: "query", err: err}
	}
	res := sminfoResult{
		SMLID: dest.LID, Target: dest.json(), Method: methodName, Modifier: mod,
		GUID: got.GUID, ActivityCount: got.ActCount, Priority: got.Priority,
		State: uint8(got.SMState), StateText: "???",
	}
	if int(res.State) < len(smStateNames) {
		res.StateText = smStateNames[res.State]
	}
	if opts.JSON {
		return writeJSON(env.IO.Out, &res)
	}
	_, err = fmt.Fprintf(env.IO.Out, "sminfo: sm lid %d sm guid 0x%x, activity count %d priority %d state %d %s\n",
		res.SMLID, uint64(res.GUID), res.ActivityCount, res.Priority, res.State, res.StateText)
	return err
}

// The rest of this file is shared by sminfo, ibaddr, ibportstate, ibping
// and ibsysstat: failures reported the way infiniband-diags does, libibmad's
// port ids, and SMPs with an M_Key.

// ibWarns says whether libibmad writes to stderr for a failed MAD: it does
// for lost ones ("_do_madrpc failed"), not for a bad status (unless -e).
func ibWarns(err error) bool {
	var te *rpc.TimeoutError
	return errors.As(err, &te) || !errors.As(err, new(*rpc.StatusError))
}

// ibOpen opens the local port as mad_rpc_open_port does, with the C tools'
// failure message.
func ibOpen(env *Env, c *Common) (*rpc.Engine, error) {
	return ibOpenWith(env, c, engineConfig{timeout: rpc.DefaultTimeout})
}

// ibOpenWith is ibOpen with the engine's settings given.
func ibOpenWith(env *Env, c *Common, cfg engineConfig) (*rpc.Engine, error) {
	if _, err := c.timeoutMS(DefaultTimeoutMS); err != nil {
		return nil, &ibFailure{cmsg: err.Error(), fn: "process_opt"}
	}
	eng, err := openEngine(env, c, cfg)
	if err != nil {
		var ee *ExitError
		if errors.As(err, &ee) {
			return nil, err
		}
		ca := c.CA
		if ca == "" {
			ca = "(null)"
		}
		port, _ := endport.ParseUint(c.Port, 32)
		return nil, &ibFailure{cmsg: fmt.Sprintf("Failed to open '%s' port '%d'", ca, port), err: err, stderr: true}
	}
	return eng, nil
}

// ibMKey is -y: the M_Key the SMPs carry.
func ibMKey(c *Common) (uint64, error) {
	if c.MKey == "" {
		return 0, nil
	}
	k, err := endport.ParseUint(c.MKey, 64)
	if err != nil {
		return 0, usageErrorf("invalid M_Key %q: %v", c.MKey, err)
	}
	return k, nil
}

// ibPortID is libibmad's ib_portid_t for SMPs: a LID, a directed route,
// or both (a "combined" route: LID routed to LID, then directed, DrSLID
// set).
type ibPortID struct {
	LID    uint16
	Path   []byte // the directed route, Path[0] = 0; nil when LID routed
	DrSLID uint16 // for a combined route
}

// String is libibmad's portid2str: "Lid 2", "DR path slid 65535; dlid
// 65535; 0,1", "Lid 1 DR path slid 1; dlid 65535; 0,8".
func (p ibPortID) String() string {
	var b strings.Builder
	if p.LID > 0 {
		fmt.Fprintf(&b, "Lid %d", p.LID)
		if len(p.Path) < 2 {
			return b.String()
		}
		b.WriteByte(' ')
	}
	slid := p.DrSLID
	if slid == 0 {
		slid = umad.PermissiveLID
	}
	fmt.Fprintf(&b, "DR path slid %d; dlid %d; %s", slid, umad.PermissiveLID, ibDRPathText(p.Path))
	return b.String()
}

// ibDRPathText is drpath2str's list of hops: "0" for the local port.
func ibDRPathText(path []byte) string {
	if len(path) == 0 {
		return "0"
	}
	parts := make([]string, len(path))
	for i, p := range path {
		parts[i] = fmt.Sprint(p)
	}
	return strings.Join(parts, ",")
}

// directed says whether SMPs to p are directed-route SMPs: a path of at
// least one hop, or no LID at all (libibmad sends LID 0 as a 0-hop route).
func (p ibPortID) directed() bool { return len(p.Path) > 1 || p.LID == 0 }

// request builds an SMP to p with an M_Key and, for a Set, the data.
func (p ibPortID) request(method uint8, attr uint16, mod uint32, mkey uint64, data []byte) *rpc.Request {
	var req *rpc.Request
	if p.directed() {
		path := p.Path
		if len(path) == 0 {
			path = []byte{0}
		}
		m := mad.NewDRSMP(method, attr, mod, path)
		addr := umad.Address{LID: umad.PermissiveLID}
		if p.LID > 0 { // combined: LID routed to p.LID, directed from there
			binary.BigEndian.PutUint16(m[32:], p.DrSLID)
			addr.LID = p.LID
		}
		req = &rpc.Request{Addr: addr, MAD: m}
	} else {
		req = &rpc.Request{Addr: umad.Address{LID: p.LID}, MAD: mad.NewLIDSMP(method, attr, mod)}
	}
	binary.BigEndian.PutUint64(req.MAD[24:], mkey) // M_Key (IBA 14.2.1.1)
	copy(req.MAD.SMPData(), data)
	return req
}

// ibSMP sends one SMP (smp_query_via/smp_set_via) and returns the reply's
// 64 data bytes. A reply with a bad status (below the DR direction bit) is
// an *rpc.StatusError, no reply an *rpc.TimeoutError.
func ibSMP(ctx context.Context, eng *rpc.Engine, p ibPortID, method uint8, attr uint16, mod uint32, mkey uint64, data []byte) ([]byte, error) {
	req := p.request(method, attr, mod, mkey, data)
	reply, err := eng.Do(ctx, req)
	if err != nil {
		var te *rpc.TimeoutError
		if errors.As(err, &te) && p.directed() && p.LID > 0 {
			err = fmt.Errorf("%w; combined LID+DR routes need SMAs that forward them (ibsim drops them)", err)
		}
		return nil, err
	}
	if reply.MAD.Status()&^mad.DirectionBit != 0 {
		return nil, &rpc.StatusError{Addr: req.Addr, Req: req.MAD, Reply: reply.MAD}
	}
	return append([]byte(nil), reply.MAD.SMPData()...), nil
}

// ibResolve parses and resolves a destination as resolve_portid_str does:
// a LID, a directed route (-D), or a GUID/GID whose LID the SA's
// PathRecord gives. A malformed target is a usage error as "ibtool <cmd>".
func ibResolve(ctx context.Context, eng *rpc.Engine, c *Common, arg string) (ibPortID, error) {
	cantResolve := func(err error, code int) error {
		return &ibFailure{cmsg: "can't resolve destination port " + arg, err: err, code: code, stderr: code == ExitFailure}
	}
	t, err := endport.ParseTarget(arg, c.typeFlags())
	if err != nil {
		return ibPortID{}, cantResolve(err, ExitUsage)
	}
	switch t.Kind {
	case endport.ByLID:
		return ibPortID{LID: t.LID}, nil
	case endport.ByDRPath:
		return ibPortID{Path: t.DRPath}, nil
	}
	r, err := newResolver(eng, c)
	if err != nil {
		return ibPortID{}, cantResolve(err, ExitFailure)
	}
	lid, err := r.SMPLID(ctx, t)
	if err != nil {
		return ibPortID{}, cantResolve(err, ExitFailure)
	}
	return ibPortID{LID: lid}, nil
}
