package linkrate

import (
	"testing"

	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/mad"
)

// ratePort is port 1 of a node of type typ whose port 1 runs at speed
// (and ext when the capability port announces extended speeds); withPort0
// gives a switch its port 0, which holds the switch's capability mask.
func ratePort(typ int, speed mad.LinkSpeed, ext mad.LinkSpeedExt, fdr10, withPort0 bool) *discovery.Port {
	n := &discovery.Node{Type: typ, NumPorts: 1, Ports: make([]*discovery.Port, 2)}
	pi := mad.PortInfo{LinkWidthActive: mad.LinkWidth4X, LinkSpeedActive: speed, LinkSpeedExtActive: ext}
	if ext != 0 {
		pi.CapabilityMask = uint32(mad.PortCapMaskExtendedSpeeds)
	}
	p := &discovery.Port{Node: n, Num: 1, PortInfo: mad.Encode(&pi)}
	if fdr10 {
		p.MlnxExtPortInfo = mad.Encode(&mad.MlnxExtPortInfo{LinkSpeedActive: uint8(mad.MlnxLinkSpeedFDR10)})
	}
	n.Ports[1] = p
	if typ == discovery.NodeSwitch && withPort0 {
		n.Ports[0] = &discovery.Port{Node: n, Num: 0, PortInfo: mad.Encode(&mad.PortInfo{CapabilityMask: pi.CapabilityMask})}
	}
	return p
}

// The nuances of the C tools the one implementation keeps: ibnetdiscover
// shows FDR10 only for a link at QDR, a switch's capability mask is its
// port 0's, and a switch without port 0 has no speed.
func TestPortRateTexts(t *testing.T) {
	for _, tc := range []struct {
		name             string
		p                *discovery.Port
		width, speed     string // ibnetdiscover's columns
		activeW, activeS string // iblinkinfo's texts
	}{
		{"CA at QDR with FDR10", ratePort(discovery.NodeCA, mad.LinkSpeedQDR, 0, true, false), "4x", "FDR10", "4X", "10.0 Gbps (FDR10)"},
		{"CA at SDR with the FDR10 bit", ratePort(discovery.NodeCA, mad.LinkSpeedSDR, 0, true, false), "4x", "SDR", "4X", "10.0 Gbps (FDR10)"},
		{"CA at EDR", ratePort(discovery.NodeCA, mad.LinkSpeedQDR, mad.LinkSpeedExtEDR, false, false), "4x", "EDR", "4X", "25.78125 Gbps"},
		{"switch at EDR", ratePort(discovery.NodeSwitch, mad.LinkSpeedQDR, mad.LinkSpeedExtEDR, false, true), "4x", "EDR", "4X", "25.78125 Gbps"},
		{"switch without port 0", ratePort(discovery.NodeSwitch, mad.LinkSpeedQDR, mad.LinkSpeedExtEDR, false, false), "4x", "???",
			mad.LinkWidth(0).String(), mad.LinkSpeed(0).String()},
	} {
		r := Of(tc.p)
		if w, s := r.CompatWidth(), r.CompatSpeed(); w != tc.width || s != tc.speed {
			t.Errorf("%s: ibnetdiscover %s %s, want %s %s", tc.name, w, s, tc.width, tc.speed)
		}
		if w, s := r.ActiveWidth(), r.ActiveSpeed(); w != tc.activeW || s != tc.activeS {
			t.Errorf("%s: iblinkinfo %s %s, want %s %s", tc.name, w, s, tc.activeW, tc.activeS)
		}
	}
}
