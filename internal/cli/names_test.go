package cli

import (
	"strings"
	"testing"

	"github.com/ibtool/ibtool/internal/cli/cmdutil"
)

// A node's name works wherever a target does, resolved through the SA by
// its NodeDescription; a name no node has is a bad argument (exit 2 as
// "ibtool <cmd>"), as a malformed target is.
func TestTargetsByName(t *testing.T) {
	f := sharedFabric(t, "tiny.net")
	for _, tc := range []struct{ byName, byLID string }{
		{"smpquery nodeinfo Switch1", "smpquery nodeinfo 1"},
		{"smpquery portinfo hca~one 1", "smpquery portinfo 2 1"},
		{"ibaddr Hca3", "ibaddr 4"},
		{"ibroute Switch1", "ibroute 1"},
		{"ibprintswitch sw2~desc", "ibprintswitch 0x200001"},
		{"ibprintca Hca2", "ibprintca 0x100003"},
	} {
		name, lid := fields(tc.byName), strings.Fields(tc.byLID)
		a, b := runSim(f, "", name...), runSim(f, "", lid...)
		if a.Code != 0 || a.Stdout != b.Stdout {
			t.Errorf("%q (exit %d):\n%s%s\nwant %q:\n%s", tc.byName, a.Code, a.Stdout, a.Stderr, tc.byLID, b.Stdout)
		}
	}
	// perfquery's counters move with every MAD: compare the header.
	r := runSim(f, "", "perfquery", "Hca3", "1")
	if r.Code != 0 || !strings.HasPrefix(r.Stdout, "# Port counters: Lid 4 port 1") {
		t.Errorf("perfquery Hca3 1: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	for _, cmd := range []string{"smpquery nodeinfo nosuchnode", "perfquery nosuchnode", "ibaddr nosuchnode", "ibping -c 1 nosuchnode"} {
		wantFailure(t, runSim(f, "", strings.Fields(cmd)...), cmdutil.ExitUsage, `no node is named "nosuchnode"`)
	}
}

// fields splits a command line at spaces; ~ inside a word is a space.
func fields(s string) []string {
	w := strings.Fields(s)
	for i := range w {
		w[i] = strings.ReplaceAll(w[i], "~", " ")
	}
	return w
}
