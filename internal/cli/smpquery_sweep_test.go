package cli

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/ibtool/ibtool/internal/cli/cmdutil"
	"github.com/ibtool/ibtool/internal/simfabric"
)

// TestSmpquerySweepAllTopologies runs every smpquery operation that ibsim
// answers against a few nodes of every shared topology, LID and DR routed,
// and compares with infiniband-diags.
func TestSmpquerySweepAllTopologies(t *testing.T) {
	if testing.Short() {
		t.Skip("sweep over every topology")
	}
	topologies := []string{"tiny.net", "ibsim-net.net", "ibsim-net1.net", "ibsim-2sw2path4hca.net",
		"ibsim-2sw2path4hca2port.net", "fattree-50.net", "fattree-200.net", "torus-3x3.net"}
	ops := [][]string{{"nodeinfo"}, {"nodedesc"}, {"portinfo"}, {"portinfo", "1"}, {"switchinfo"},
		{"pkeys"}, {"sl2vl"}, {"vlarb"}, {"GI"}, {"mlnxextportinfo"}, {"-x", "portinfo", "1"}}
	for _, topo := range topologies {
		f := sharedFabric(t, topo)
		var runs, failures int
		// LID 1 is OpenSM's own node; a DR hop out of it and a longer
		// route reach a neighbour and a node further away.
		for _, target := range [][]string{{"1"}, {"3"}, {"-D", "0,1"}, {"-D", "0,1,1"}} {
			for _, op := range ops {
				args := append(append([]string{}, target[:len(target)-1]...), op[0])
				if op[0] == "-x" {
					args = append(append([]string{"-x"}, target[:len(target)-1]...), op[1])
					op = op[1:]
				}
				args = append(args, target[len(target)-1])
				args = append(args, op[1:]...)
				t.Run(fmt.Sprint(topo, args), func(t *testing.T) {
					// As the symlink: failures (SwitchInfo of a CA, a
					// route that leads nowhere) must match too, IBEXIT
					// line and exit code included. Which queries fail
					// depends on the topology; a failure is expected only
					// as an IBEXIT.
					c := f.RunC(context.Background(), "", "smpquery", args...)
					var tt testing.TB = t
					runs++
					if c.Code == cmdutil.ExitFailure && strings.Contains(c.Stdout, "iberror: failed: ") {
						tt = simfabric.ExpectFailure(t)
						failures++
					}
					simfabric.Compare(tt, fmt.Sprint("smpquery ", args), c, runCompat(f, "", args...), simfabric.DropSimNoise, cProgName)
				})
			}
		}
		// Most queries reach their node: a C tool that fails them all
		// is broken, not matched.
		if failures*2 > runs {
			t.Errorf("%s: the C tool failed %d of %d queries", topo, failures, runs)
		}
	}
}
