package ibportstate

import (
	"regexp"
	"strings"
	"testing"

	"github.com/ibtool/ibtool/internal/cli/cmdutil"
)

// The peer checks warn as libibmad's IBWARN: the best rate both ends
// enable should be the active one.
func TestIbportstatePeerWarnings(t *testing.T) {
	var errOut strings.Builder
	s := &portState{env: &cmdutil.Env{IO: cmdutil.IO{Err: &errOut}}}
	s.checkPeer("validate_width", "width", 0x3&0x1f, 1, []peerRate{{0x8, 8, "12x"}, {0x4, 4, "8x"}, {0x2, 2, "4x"}, {0x10, 16, "2x"}, {0x1, 1, "1x"}})
	s.checkPeer("validate_speed", "speed", 0x7&0x3, 2, []peerRate{{0x4, 4, "10.0 Gbps"}, {0x2, 2, "5.0 Gbps"}, {0x1, 1, "2.5 Gbps"}})
	want := []string{"Peer ports operating at active width 1 rather than 2 (4x)"}
	if strings.Join(s.res.Warnings, "|") != strings.Join(want, "|") {
		t.Errorf("warnings %q, want %q", s.res.Warnings, want)
	}
	if !regexp.MustCompile(`^ibwarn: \[\d+\] validate_width: Peer ports operating at active width 1 rather than 2 \(4x\)\n$`).MatchString(errOut.String()) {
		t.Errorf("stderr %q", errOut.String())
	}
	if linkEnabled(255, 0x13, 255) != 0x13 || linkEnabled(2, 0x13, 255) != 2 || linkEnabled(15, 7, 15) != 7 {
		t.Error("linkEnabled: 255/15/31 mean the supported set")
	}
}
