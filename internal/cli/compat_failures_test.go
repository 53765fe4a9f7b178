package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ibtool/ibtool/internal/cli/cmdutil"
	"github.com/ibtool/ibtool/internal/simfabric"
)

// Through the symlinks, ibnetdiscover, the scripts built on it and
// ibcacheedit fail as the C tools do: the IBEXIT line on stdout (with
// ibnetdiscover's empty line after it), exit 255, and stderr written
// exactly when the C tool writes there.
func TestFabricToolFailuresMatchInfinibandDiags(t *testing.T) {
	f := sharedFabric(t, "tiny.net")
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.cache")
	corrupt := filepath.Join(dir, "corrupt.cache")
	if err := os.WriteFile(corrupt, []byte("not a cache"), 0o644); err != nil {
		t.Fatal(err)
	}
	nowhere := filepath.Join(dir, "no", "such", "dir")
	for _, tc := range []struct{ host, args string }{
		{"", "-C bogus0"},                 // no such CA: libibnetdisc cannot open the port
		{"Hca1", "-P 7"},                  // no such port
		{"", "-d -C bogus0"},              // the IBEXIT line names main
		{"", "--load-cache " + missing},   // no cache file
		{"", "--load-cache " + corrupt},   // not a cache
		{"", "--diff " + missing},         // no cache to diff against
		{"", "--cache " + nowhere + "/x"}, // the topology, then the cache fails
		{"", nowhere + "/topo"},           // no topology file to write
		{"", "-t 0"},                      // a bad timeout
		{"Hca1", "-s -P 7"},               // nothing found before the failure
	} {
		conformLinked(simfabric.ExpectFailure(t), f, tc.host, "ibnetdiscover", []simfabric.Normalizer{simfabric.Timestamps, simfabric.PIDs}, strings.Fields(tc.args)...)
	}
	for _, tc := range []struct{ host, tool, args string }{
		{"", "ibhosts", "-C bogus0"},
		{"Hca1", "ibswitches", "-P 7"},
		{"", "ibnodes", "-C bogus0"}, // two runs of ibnetdiscover, two lines
		{"", "ibrouters", "-t 0"},
	} {
		conformLinked(simfabric.ExpectFailure(t), f, tc.host, tc.tool, nil, strings.Fields(tc.args)...)
		// The scripts run /usr/sbin/ibnetdiscover, and awk passes its
		// IBEXIT line through: the path is part of the line.
		r := runLinked(f, tc.host, tc.tool, strings.Fields(tc.args)...)
		if !strings.HasPrefix(r.Stdout, "/usr/sbin/ibnetdiscover: iberror: failed: ") {
			t.Errorf("%s %s: stdout %q", tc.tool, tc.args, r.Stdout)
		}
	}

	x := simCache(t, f, dir)
	for _, args := range []string{
		"",
		x,
		"--switchguid 0x999:0x1 " + x + " " + filepath.Join(dir, "a.cache"),
		"--caguid 0x200000:0x1 " + x + " " + filepath.Join(dir, "b.cache"),
		"--portguid 0x5:0x100001:0x2 " + x + " " + filepath.Join(dir, "c.cache"),
		missing + " " + filepath.Join(dir, "d.cache"),
		corrupt + " " + filepath.Join(dir, "e.cache"),
		"--switchguid 0x200000:0x1 " + x + " " + nowhere + "/f.cache",
	} {
		conformLinked(simfabric.ExpectFailure(t), f, "", "ibcacheedit", nil, strings.Fields(args)...)
	}
}

// A malformed target: "ibtool <cmd>" calls it a usage error (exit 2); the
// C tools, and ibtool through their symlinks, fail with IBEXIT (exit 255),
// as docs/exit-codes.md says.
func TestMalformedTargetExitCodes(t *testing.T) {
	f := sharedFabric(t, "tiny.net")
	// Targets that are malformed whatever the fabric holds: an explicit
	// GUID that is no number, a route with a hop that is no port, LID 0.
	// (A word such as "bogus" may be a node's name.)
	for _, tc := range []struct{ tool, args string }{
		{"smpquery", "-G nodeinfo 0xzz"},
		{"smpquery", "nodeinfo 0"},
		{"smpquery", "-D nodeinfo 0,x"}, // the C tool reads x as 0 and succeeds: not compared
		{"perfquery", "-G 0xzz"},
		{"sminfo", "-G 0xzz"},
		{"ibaddr", "-G 0xzz"},
		{"ibportstate", "-G 0xzz 1"},
		{"ibsysstat", "-G 0xzz"},
		{"ibping", "-c 1 -G 0xzz"},
	} {
		args := strings.Fields(tc.args)
		if !strings.Contains(tc.args, "0,x") {
			conformLinked(simfabric.ExpectFailure(t), f, "", tc.tool, nil, args...)
		}
		linked := runLinked(f, "", tc.tool, args...)
		if linked.Code != cmdutil.ExitFailure || !strings.HasPrefix(linked.Stdout, tc.tool+": iberror: failed: can't resolve destination port ") {
			t.Errorf("%s %s through the link: %v", tc.tool, tc.args, linked)
		}
		wantFailure(t, runSim(f, "", append([]string{tc.tool}, args...)...), cmdutil.ExitUsage, "can't resolve destination port")
	}
	// smpdump's C tool reads any LID as a number and dumps zeros; ibtool
	// refuses the target as a usage error in both modes.
	c := f.RunC(context.Background(), "", "smpdump", "bogus", "0x11")
	if c.Code != 0 {
		t.Errorf("C smpdump bogus: %v", c)
	}
	if r := runLinked(f, "", "smpdump", "bogus", "0x11"); r.Code != cmdutil.ExitUsage || r.Stdout != "" {
		t.Errorf("smpdump bogus through the link: %v", r)
	}
}
