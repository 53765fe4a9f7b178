package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

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
