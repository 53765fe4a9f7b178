package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ibtool/ibtool/internal/cli/cmd/ibidsverify"
	"github.com/ibtool/ibtool/internal/cli/cmdutil"
	"github.com/ibtool/ibtool/internal/simfabric"
)

// ibidsverify against infiniband-diags' script: on the live fabric (-R:
// both discover and write the script's topology file), and on topology
// files with duplicated and zero LIDs and GUIDs placed where the script
// reads them (a -C/-P of their own, so no other run's file is touched).
func TestIbidsverifyConform(t *testing.T) {
	f := sharedFabric(t, "tiny.net")
	simfabric.RequireTools(t, "ibidsverify")
	t.Run("live -R", func(t *testing.T) { conformCompat(t, f, "", "ibidsverify", "-R") })
	t.Run("live -R fattree-50", func(t *testing.T) {
		conformCompat(t, sharedFabric(t, "fattree-50.net"), "", "ibidsverify", "-R")
	})
	t.Run("duplicates", func(t *testing.T) {
		ca := fmt.Sprintf("ibtooltest%d", os.Getpid())
		file := filepath.Join(ibidsverify.IdsCacheDir, "ibnetdiscover-"+ca+"-1.topology")
		text, err := os.ReadFile("testdata/ibidsverify/dup.topology")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, text, 0o644); err != nil {
			t.Fatal(err)
		}
		defer os.Remove(file)
		conformCompat(cFails(t, true), f, "", "ibidsverify", "-C", ca, "-P", "1")
		r := runSim(f, "", "ibidsverify", "-C", ca, "-P", "1")
		want := []string{
			"LID 3 already defined for NodeGUID 0x100006",
			"NodeGUID 0x100006 already defined for LID 4",
			"PortGUID 0x100007 already defined for LID 4",
			"LID 1 already defined for NodeGUID 0x200000",
			"LID 0 found for ca NodeGUID 0x100010",
			"PortGUID 0xe41d2d03001f0000 is an invalid duplicate of a NodeGUID",
		}
		for _, w := range want {
			if !strings.Contains(r.Stdout, w+"\n") {
				t.Errorf("missing %q in:\n%s", w, r.Stdout)
			}
		}
		if r.Code != 1 {
			t.Errorf("exit %d, want 1", r.Code)
		}
		r = runSim(f, "", "ibidsverify", "--json", "-C", ca, "-P", "1")
		var doc ibidsverify.IdsResult
		if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil || len(doc.Problems) != len(want) {
			t.Fatalf("JSON %v: %s", err, r.Stdout)
		}
		kinds := map[string]bool{}
		for _, p := range doc.Problems {
			kinds[p.Kind] = true
		}
		for _, k := range []string{"zero_lid", "duplicate_lid", "duplicate_node_guid", "duplicate_port_guid", "port_guid_is_node_guid"} {
			if !kinds[k] {
				t.Errorf("JSON has no %s problem: %s", k, r.Stdout)
			}
		}
	})
	t.Run("bad option", func(t *testing.T) {
		r := runSim(f, "", "ibidsverify", "-x")
		if r.Code != cmdutil.ExitUsage || r.Stdout != "" {
			t.Errorf("got %v", r)
		}
	})
}
