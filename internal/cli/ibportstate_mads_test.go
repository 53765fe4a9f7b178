package cli

import (
	"regexp"
	"strings"
	"testing"

	"github.com/ibtool/ibtool/internal/cli/cmdutil"
)

// ibportstate sends each SMP once, as the C tool does in practice: an
// Active switch port's peer behind a combined route that ibsim does not
// forward costs one timeout, where resending made it three. The MADs are
// read from the -d trace.
func TestIbportstateSendsEachSMPOnce(t *testing.T) {
	f := sharedFabric(t, "tiny.net")
	r := runSim(f, "", "ibportstate", "-d", "-t", "100", "1", "1") // Switch1 port 1, by LID
	if r.Code != cmdutil.ExitFailure || !strings.Contains(r.Stdout, "# Port info: Lid 1 port 1\n") {
		t.Fatalf("%v", r)
	}
	sends := regexp.MustCompile(`(?m)^ibtool: send +(.*) tid `).FindAllStringSubmatch(r.Stderr, -1)
	var got []string
	for _, m := range sends {
		got = append(got, m[1])
	}
	want := []string{
		"SubnGet(NodeInfo) LID 1 mod 0x0",
		"SubnGet(PortInfo) LID 1 mod 0x0",
		"SubnGet(PortInfo) LID 1 mod 0x1",
		"SubnGet(NodeInfo) DR path 0,1 mod 0x0", // the peer, LID routed to 1 then directed out of port 1
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("SMPs sent:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !strings.Contains(r.Stderr, "(1 attempt, timeout 100ms)") {
		t.Errorf("stderr %q", r.Stderr)
	}
}
