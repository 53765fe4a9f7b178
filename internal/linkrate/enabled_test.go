package linkrate

import (
	"testing"

	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/mad"
)

// link makes two CA ports linked to each other with PortInfos a and b.
func link(a, b *mad.PortInfo) *discovery.Port {
	pa := &discovery.Port{Node: &discovery.Node{Type: discovery.NodeCA}, Num: 1, PortInfo: mad.Encode(a)}
	pb := &discovery.Port{Node: &discovery.Node{Type: discovery.NodeCA}, Num: 1, PortInfo: mad.Encode(b)}
	pa.Remote, pb.Remote = pb, pa
	return pa
}

func TestBelowEnabled(t *testing.T) {
	w4, w1, w12 := uint8(mad.LinkWidth4X), uint8(mad.LinkWidth1X), uint8(mad.LinkWidth12X)
	ext := uint32(mad.PortCapMaskExtendedSpeeds)
	edr, fdr := uint8(mad.LinkSpeedExtEDR), uint8(mad.LinkSpeedExtFDR)
	ext2 := uint32(mad.PortCapMaskExtendedSpeeds | mad.PortCapMaskCapabilityMask2)
	for _, c := range []struct {
		name string
		a, b mad.PortInfo
		want bool
	}{
		{"4X SDR as both are enabled (ibsim: 12X QDR supported)",
			mad.PortInfo{LinkWidthSupported: w1 | w4 | w12, LinkWidthEnabled: w4, LinkWidthActive: mad.LinkWidth4X, LinkSpeedSupported: 7, LinkSpeedEnabled: 1, LinkSpeedActive: mad.LinkSpeedSDR},
			mad.PortInfo{LinkWidthSupported: w1 | w4 | w12, LinkWidthEnabled: w4, LinkWidthActive: mad.LinkWidth4X, LinkSpeedSupported: 7, LinkSpeedEnabled: 1, LinkSpeedActive: mad.LinkSpeedSDR}, false},
		{"a lane lost: 1X where both enable 4X",
			mad.PortInfo{LinkWidthSupported: w1 | w4, LinkWidthEnabled: w1 | w4, LinkWidthActive: mad.LinkWidth1X, LinkSpeedSupported: 1, LinkSpeedEnabled: 1, LinkSpeedActive: mad.LinkSpeedSDR},
			mad.PortInfo{LinkWidthSupported: w1 | w4, LinkWidthEnabled: 0xFF, LinkWidthActive: mad.LinkWidth1X, LinkSpeedSupported: 1, LinkSpeedEnabled: 1, LinkSpeedActive: mad.LinkSpeedSDR}, true},
		{"QDR where both enable it, trained at DDR",
			mad.PortInfo{LinkWidthEnabled: w4, LinkWidthActive: mad.LinkWidth4X, LinkSpeedSupported: 7, LinkSpeedEnabled: 15, LinkSpeedActive: mad.LinkSpeedDDR},
			mad.PortInfo{LinkWidthEnabled: w4, LinkWidthActive: mad.LinkWidth4X, LinkSpeedSupported: 7, LinkSpeedEnabled: 7, LinkSpeedActive: mad.LinkSpeedDDR}, true},
		{"EDR enabled at both ends, trained at FDR",
			mad.PortInfo{CapabilityMask: ext, LinkWidthEnabled: w4, LinkWidthActive: mad.LinkWidth4X, LinkSpeedExtSupported: fdr | edr, LinkSpeedExtEnabled: fdr | edr, LinkSpeedExtActive: mad.LinkSpeedExtFDR},
			mad.PortInfo{CapabilityMask: ext, LinkWidthEnabled: w4, LinkWidthActive: mad.LinkWidth4X, LinkSpeedExtSupported: fdr | edr, LinkSpeedExtEnabled: 31, LinkSpeedExtActive: mad.LinkSpeedExtFDR}, true},
		{"FDR because the far end enables no more",
			mad.PortInfo{CapabilityMask: ext, LinkWidthEnabled: w4, LinkWidthActive: mad.LinkWidth4X, LinkSpeedExtSupported: fdr | edr, LinkSpeedExtEnabled: fdr | edr, LinkSpeedExtActive: mad.LinkSpeedExtFDR},
			mad.PortInfo{CapabilityMask: ext, LinkWidthEnabled: w4, LinkWidthActive: mad.LinkWidth4X, LinkSpeedExtSupported: fdr | edr, LinkSpeedExtEnabled: fdr, LinkSpeedExtActive: mad.LinkSpeedExtFDR}, false},
		{"XDR, as both enable",
			mad.PortInfo{CapabilityMask: ext2, CapabilityMask2: uint16(mad.PortCapMask2ExtSpeeds2), LinkWidthEnabled: w4, LinkWidthActive: mad.LinkWidth4X,
				LinkSpeedExtSupported: edr, LinkSpeedExtEnabled: edr, LinkSpeedExtSupported2: 1, LinkSpeedExtEnabled2: 1, LinkSpeedExtActive2: mad.LinkSpeedExt2XDR},
			mad.PortInfo{CapabilityMask: ext2, CapabilityMask2: uint16(mad.PortCapMask2ExtSpeeds2), LinkWidthEnabled: w4, LinkWidthActive: mad.LinkWidth4X,
				LinkSpeedExtSupported: edr, LinkSpeedExtEnabled: edr, LinkSpeedExtSupported2: 1, LinkSpeedExtEnabled2: 1, LinkSpeedExtActive2: mad.LinkSpeedExt2XDR}, false},
		{"EDR where both enable XDR",
			mad.PortInfo{CapabilityMask: ext2, CapabilityMask2: uint16(mad.PortCapMask2ExtSpeeds2), LinkWidthEnabled: w4, LinkWidthActive: mad.LinkWidth4X,
				LinkSpeedExtSupported: edr, LinkSpeedExtEnabled: edr, LinkSpeedExtActive: mad.LinkSpeedExtEDR, LinkSpeedExtSupported2: 1, LinkSpeedExtEnabled2: 1},
			mad.PortInfo{CapabilityMask: ext2, CapabilityMask2: uint16(mad.PortCapMask2ExtSpeeds2), LinkWidthEnabled: w4, LinkWidthActive: mad.LinkWidth4X,
				LinkSpeedExtSupported: edr, LinkSpeedExtEnabled: edr, LinkSpeedExtActive: mad.LinkSpeedExtEDR, LinkSpeedExtSupported2: 1, LinkSpeedExtEnabled2: 1}, true},
	} {
		if got := BelowEnabled(link(&c.a, &c.b)); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
