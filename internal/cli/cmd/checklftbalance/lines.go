package checklftbalance

// Live mode: the fabric and its tables read as dump_lfts reads them, and
// the script fed, for each line dump_lfts would print, what the script
// would make of it: the tables are not printed and parsed back.

import (
	"context"
	"fmt"
	"strings"

	"github.com/ibtool/ibtool/internal/cli/cmdutil"
	"github.com/ibtool/ibtool/internal/cli/render"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/routing"
	"github.com/ibtool/ibtool/internal/rpc"
)

// runLive reads the fabric and every switch's LFT as dump_lfts does, with
// its messages on stderr, and runs the script over them.
func runLive(env *cmdutil.Env, o *options) (*lftBalanceResult, error) {
	c := &o.Common
	names := o.src.Names(env.IO.Err)
	fab, err := cmdutil.DumpFabric(env, c, &o.src)
	if err != nil {
		return nil, err
	}
	ctx := context.Background()
	client, err := cmdutil.IBOpenClient(env, c, cmdutil.EngineConfig{Timeout: rpc.DefaultTimeout})
	if err != nil {
		return nil, err
	}
	defer client.Engine().Close()

	switches := render.DumpSwitches(fab)
	targets := make([]routing.Target, len(switches))
	lasts := make([]int, len(switches))
	warns := make([]string, len(switches))
	for i, s := range switches {
		n := s.Node
		targets[i] = routing.Target{GUID: n.GUID, Dest: routing.DestOf(n), NumPorts: n.NumPorts, Info: s.Info}
		_, lasts[i], targets[i].Blocks, warns[i] = render.UnicastRange(0, 0, int(s.Info.LinearFDBTop))
	}
	read := routing.ReadSwitches(ctx, client, targets, routing.Want{LFT: true})
	dests := render.FabricDests(routing.LIDMap(fab), names, "")
	sc := newScript(fab, names.Name, o.heuristic, o.verbose)
	for i, sw := range read {
		s := switches[i]
		name := names.Name(s.Node.GUID, s.Node.Desc())
		// dump_lfts' stderr, switch by switch: the range's IBWARN, then
		// the blocks that failed (shown as the block before them).
		if warns[i] != "" {
			cmdutil.IBWarn(env, "dump_unicast_tables", "%s", warns[i])
		}
		table, failed, _ := render.UnicastTable(sw, 0, lasts[i], false)
		for _, e := range failed {
			fmt.Fprintln(env.IO.Err, render.DumpFtsBlockLine(s.Node, name, s.Route, "LFT", e))
		}
		table.Dests = dests
		tableLines(sc, mad.GUID(s.Node.GUID).String(), name, table)
	}
	sc.line(lftLine{}) // the empty string after the text's last newline
	if o.src.Live() {
		// As dump_fts said it, and without its exit status.
		cmdutil.WalkIncomplete(env, c, "dump_fts", fab)
	}
	return sc.end(), nil
}

// tableLines feeds the script the lines of one switch's table.
func tableLines(sc *script, guid, name string, t *render.LFTText) {
	h := lftLine{kind: lineSwitch}
	h.guid, h.name, h.named = headerFields(guid, name)
	sc.line(h)
	sc.line(lftLine{}) // "  Lid  Out   Destination"
	sc.line(lftLine{}) // "       Port     Info "
	d := &render.LIDDescriber{Dests: t.Dests}
	for i, p := range t.Ports {
		if int(p) > t.NumPorts {
			continue // not shown
		}
		sc.line(entryLine(int(p), d.Describe(t.First+i, true)))
	}
	sc.line(lftLine{}) // "N valid lids dumped "
}

// entryLine is what the script makes of the line of a LID that the
// switch sends out of port out, which dump_lid describes as desc. The
// line's words are fixed but for the destination's type and name, so
// those decide where the script puts it; the regexes take the port
// column and the name.
func entryLine(out int, desc render.LIDDesc) lftLine {
	switch desc.Kind {
	case render.LIDPath:
		l := lftLine{kind: linePath}
		// "path #. out of .: portguid": one digit each, and a port that
		// answered.
		if desc.Of <= 9 && desc.PortGUID != 0 {
			l.port = portText(out)
		}
		return l
	case render.LIDDest:
	default:
		return lftLine{} // ": (node info not available fabric scan)"
	}
	has := func(word string) bool {
		return strings.Contains(desc.Dest.NodeType.String(), word) || strings.Contains(desc.Dest.Name, word)
	}
	switch {
	case has("Unicast"): // not a header: its regex takes nothing
		return lftLine{kind: lineSwitch}
	case has("Channel") || has("Router"):
		l := lftLine{kind: lineHost}
		if name := desc.Dest.Name; name != "" { // '(.+)' wants a name
			l.port, l.host = portText(out), name
		}
		return l
	case has("path"):
		return lftLine{kind: linePath}
	}
	return lftLine{}
}

// portText is the Out Port column.
func portText(port int) string { return fmt.Sprintf("%03d", port) }

// headerFields are the GUID and name the script's header regex takes of
// "... guid G (N):", and whether it matches: the last " guid " after
// which some " (" has text before it and text between it and the line's
// last ")"; the GUID runs to the last such " (", the name from there to
// the ")". So an empty name does not match, and a name with " (" in it
// is split there.
func headerFields(guid, name string) (g, n string, ok bool) {
	const sep = " guid "
	h := sep + guid + " (" + name + "):"
	for at := strings.LastIndex(h, sep); at >= 0; at = strings.LastIndex(h[:at], sep) {
		r := h[at+len(sep):]
		end := strings.LastIndex(r, ")")
		for i := strings.LastIndex(r, " ("); i >= 1; i = strings.LastIndex(r[:i], " (") {
			if i+3 <= end {
				return r[:i], r[i+2 : end], true
			}
		}
	}
	return "", "", false
}
