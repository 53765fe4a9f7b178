package diagnose

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/nodename"
	"github.com/ibtool/ibtool/internal/routing"
)

// creditLoopsCheck reports every cycle of the channel dependency graph
// of the routes (internal/routing's CreditLoops): one finding per
// strongly connected component, with one cycle through it as its chain
// of switch ports.
type creditLoopsCheck struct{}

func (creditLoopsCheck) Name() string { return "credit_loops" }

func (creditLoopsCheck) Codes() []CodeInfo {
	return []CodeInfo{
		{"credit_loops.loop", Error, "channels between switches whose packets wait on each other in a cycle: the switches can deadlock for want of credits"},
		{"credit_loops.graph", Info, "the channel dependency graph the loops were looked for in: its channels, dependencies and VLs, and the SL2VL tables read"},
	}
}

func (creditLoopsCheck) Run(s *Snapshot, cfg *Config) ([]Finding, string) {
	if s.Tables == nil {
		return nil, noTables
	}
	cl := s.analysis().loops
	var out []Finding
	for _, l := range cl.Loops {
		out = append(out, creditLoopFinding(l, cl.PerVL, cfg.Names))
	}
	return append(out, graphFinding(s.Tables, cl)), ""
}

func creditLoopFinding(l routing.CreditLoop, perVL bool, names *nodename.Map) Finding {
	chain := make([]chainLink, len(l.Cycle))
	for i, ch := range l.Cycle {
		chain[i] = chainLink{NodeGUID: mad.GUID(ch.Node.GUID), NodeName: nodeName(ch.Node, names), Port: ch.Port}
		if perVL {
			vl := ch.VL
			chain[i].VL = &vl
		}
	}
	vls := make([]string, len(l.VLs))
	for i, vl := range l.VLs {
		vls[i] = strconv.Itoa(vl)
	}
	on := "VL " + strings.Join(vls, ", ")
	if len(l.VLs) > 1 {
		on = "VLs " + strings.Join(vls, ", ")
		if !perVL {
			on += ", the same on each"
		}
	}
	f := Finding{Code: "credit_loops.loop", Severity: Error,
		Message: fmt.Sprintf("credit loop of %s on %s; a cycle of %d: %s",
			counted(len(l.Channels), "channel"), on, len(chain), chainText(chain)),
		Evidence: []Field{{"vls", l.VLs}, {"channels", len(l.Channels)}, {"cycle", chain}}}
	first := l.Cycle[0]
	return portPlace(f, first.Node, first.Port, names)
}

// graphFinding says what the loops were looked for in, and which SL2VL
// tables the sweep read for it (tables.go: those of the loops' channels
// in the graph without VLs).
func graphFinding(t *routing.Tables, cl *routing.CreditLoops) Finding {
	ports := 0
	for _, sw := range t.Switches {
		if sw.SL2VL == nil {
			continue
		}
		outs := map[uint8]bool{}
		for pp := range sw.SL2VL.Tables {
			outs[pp.Out] = true
		}
		for pp := range sw.SL2VL.Failed {
			outs[pp.Out] = true
		}
		ports += len(outs)
	}
	vls := "every SL on one VL: no SL2VL table read, as the graph without VLs has no loop (VLs cannot make one)"
	switch {
	case ports > 0 && cl.PerVL:
		vls = fmt.Sprintf("per VL, from the SL2VL tables of the %d ports of its loops without VLs", ports)
	case ports > 0:
		vls = fmt.Sprintf("each SL on one VL throughout, as the SL2VL tables of the %d ports of its loops without VLs say", ports)
	case len(cl.Loops) > 0:
		vls = "every SL on one VL: no SL2VL table of the loops' ports was read (where a port operates one data VL, every packet is on VL 0)"
	}
	return Finding{Code: "credit_loops.graph", Severity: Info,
		Message: fmt.Sprintf("%s between switches, %s, %s; %s",
			counted(cl.Channels, "channel"), counted(cl.Edges, "dependency"), counted(len(cl.Loops), "loop"), vls),
		Evidence: []Field{{"channels", cl.Channels}, {"dependencies", cl.Edges}, {"loops", len(cl.Loops)},
			{"vls", cl.VLs}, {"sl2vl_ports", ports}}}
}
