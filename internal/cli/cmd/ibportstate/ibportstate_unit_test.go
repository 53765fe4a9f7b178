package ibportstate

import (
	"regexp"
	"strings"
	"testing"

	"github.com/ibtool/ibtool/internal/cli/cmdutil"
	"github.com/ibtool/ibtool/internal/health"
	"github.com/ibtool/ibtool/internal/mad"
)

// The peer checks warn as libibmad's IBWARN: the best rate both ends
// enable should be the active one.
func TestIbportstatePeerWarnings(t *testing.T) {
	var errOut strings.Builder
	s := &portState{env: &cmdutil.Env{IO: cmdutil.IO{Err: &errOut}}}
	// Widths 1X+4X (enabled) against all (255: supported 1X..2X), active
	// 1X; speeds SDR..QDR against SDR+DDR, active DDR.
	local := &mad.PortInfo{LinkWidthEnabled: 0x3, LinkWidthActive: mad.LinkWidth1X, LinkSpeedEnabled: 0x7, LinkSpeedActive: mad.LinkSpeedDDR}
	peer := &mad.PortInfo{LinkWidthEnabled: 255, LinkWidthSupported: 0x1f, LinkSpeedEnabled: 0x3}
	l := health.CompareLink(health.End{Info: local}, &health.End{Info: peer}, health.Enabled)
	s.checkPeer("validate_width", "width", l.Width, map[uint8]string{8: "12x", 4: "8x", 2: "4x", 16: "2x", 1: "1x"})
	s.checkPeer("validate_speed", "speed", l.Speed, map[uint8]string{4: "10.0 Gbps", 2: "5.0 Gbps", 1: "2.5 Gbps"})
	want := []string{"Peer ports operating at active width 1 rather than 2 (4x)"}
	if strings.Join(s.res.Warnings, "|") != strings.Join(want, "|") {
		t.Errorf("warnings %q, want %q", s.res.Warnings, want)
	}
	if !regexp.MustCompile(`^ibwarn: \[\d+\] validate_width: Peer ports operating at active width 1 rather than 2 \(4x\)\n$`).MatchString(errOut.String()) {
		t.Errorf("stderr %q", errOut.String())
	}
}
