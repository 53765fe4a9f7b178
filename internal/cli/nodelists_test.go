package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ibtool/ibtool/internal/cli/cmdutil"
	"github.com/ibtool/ibtool/internal/fabricdoc"
	"github.com/ibtool/ibtool/internal/simfabric"
)

var nodeListTools = []string{"ibhosts", "ibswitches", "ibrouters", "ibnodes"}

// TestNodeListsMatchInfinibandDiags runs the infiniband-diags scripts
// (which call ibnetdiscover) and ours on the shared fabrics.
func TestNodeListsMatchInfinibandDiags(t *testing.T) {
	for _, tc := range discoveryTopologies {
		t.Run(tc.topology, func(t *testing.T) {
			f := sharedFabric(t, tc.topology)
			for _, tool := range nodeListTools {
				conform(t, f, tc.hosts[len(tc.hosts)-1], tool)
			}
			conform(t, f, "", "ibswitches", "-t", "500", "-y", "0")
		})
	}
}

// TestNodeListsArguments checks the scripts' own argument handling through
// the symlinks (usage goes to stdout with exit 255, -h included), and that
// "ibtool <cmd>" answers --help with its help and a mistake with a usage
// error, as every command does.
func TestNodeListsArguments(t *testing.T) {
	f := sharedFabric(t, "tiny.net")
	for _, args := range []string{"-h", "--help", "-x", "-C", "-C -P", "-t -5", "a b", "-"} {
		for _, tool := range []string{"ibhosts", "ibnodes"} {
			conformLinked(simfabric.ExpectFailure(t), f, "", tool, nil, strings.Fields(args)...) // usage, exit 255
			r := runSim(f, "", append([]string{tool}, strings.Fields(args)...)...)
			switch args {
			case "-h", "--help":
				if r.Code != cmdutil.ExitOK || !strings.Contains(r.Stdout, "--json") || r.Stderr != "" {
					t.Errorf("ibtool %s %s: %v", tool, args, r)
				}
			default:
				wantFailure(t, r, cmdutil.ExitUsage, tool+": ")
			}
		}
	}
}

// TestNodeListsFromTopologyFiles feeds topology files to the scripts and
// to ours: the awk field arithmetic and dash's echo are reproduced, odd
// lines included.
func TestNodeListsFromTopologyFiles(t *testing.T) {
	dir := t.TempDir()
	f := sharedFabric(t, "fattree-50.net")
	topo := filepath.Join(dir, "fattree.topo")
	if r := runSim(f, "", "ibnetdiscover", "-g", topo); r.Code != 0 {
		t.Fatal(r)
	}
	odd := filepath.Join(dir, "odd.topo")
	if err := os.WriteFile(odd, []byte(strings.Join([]string{
		`Switch	8 "Switch1"`,
		`Switch	8 "S-0000000000200000"		# "port 0 here" enhanced port 0 lid 1 lmc 0`,
		`Switch	36 "S-0000000000000001"		#	"no port info"`,
		`Rt	2 "R-0000000000000002"		# "router \t tab"`,
		`Ca	2 "H-0000000000100000"		# "ibwarn: in a name"`,
		`ibpanic: a message`,
		`Ca nohash`,
		`Ca	1 "H-0000000000100001"		# "back\\slash \c cut here"`,
		`Ca	1 "H-0000000000100002"		# "never printed"`,
	}, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, file := range []string{topo, odd, filepath.Join(dir, "missing")} {
		for _, tool := range nodeListTools {
			want := runDiagsScript(t, tool, file)
			got := runSim(f, "", tool, file)
			missing := filepath.Base(file) == "missing" // cat fails: exit 1
			simfabric.Compare(cFails(t, missing), tool+" "+filepath.Base(file), want, got)
			if got.Stderr != want.Stderr {
				t.Errorf("%s %s: stderr %q, want %q", tool, file, got.Stderr, want.Stderr)
			}
		}
	}
}

// runDiagsScript runs an infiniband-diags script on a topology file (no fabric
// needed).
func runDiagsScript(t *testing.T, tool string, args ...string) simfabric.Result {
	t.Helper()
	simfabric.RequireTools(t, tool)
	path := "/usr/sbin/" + tool
	if p, err := exec.LookPath(tool); err == nil {
		path = p
	}
	var out, errOut bytes.Buffer
	cmd := exec.CommandContext(context.Background(), path, args...)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return simfabric.Result{Stdout: out.String(), Stderr: errOut.String(), Code: code}
}

func TestNodeListsJSON(t *testing.T) {
	f := sharedFabric(t, "tiny.net")
	r := runSim(f, "", "ibnodes", "--json")
	var doc struct {
		Nodes []fabricdoc.NodeDoc `json:"nodes"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil || r.Code != 0 {
		t.Fatalf("exit %d, %v: %s", r.Code, err, r.Stdout+r.Stderr)
	}
	var types []string
	for _, n := range doc.Nodes {
		types = append(types, string(n.NodeType))
	}
	if strings.Join(types, " ") != "ca ca ca switch switch" || doc.Nodes[0].NodeGUID != 0x100006 {
		t.Errorf("nodes %v", doc.Nodes)
	}
	if r := runSim(f, "", "ibhosts", "--json", "some.topo"); r.Code != cmdutil.ExitUsage {
		t.Errorf("--json with a topology file: exit %d", r.Code)
	}
}
