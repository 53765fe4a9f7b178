package health

import (
	"testing"

	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/mad"
)

const extCap = uint32(mad.PortCapMaskExtendedSpeeds)

// pi is a PortInfo running at width and speed (and extended speed ext),
// supporting the sets given.
func pi(width mad.LinkWidth, widths uint8, speed mad.LinkSpeed, speeds uint8, ext mad.LinkSpeedExt, exts uint8) *mad.PortInfo {
	return &mad.PortInfo{LinkWidthActive: width, LinkWidthSupported: widths, LinkSpeedActive: speed, LinkSpeedSupported: speeds,
		LinkSpeedExtActive: ext, LinkSpeedExtSupported: exts}
}

func TestCompareLinkWidthAndSpeed(t *testing.T) {
	for _, tc := range []struct {
		name                 string
		local, remote        *mad.PortInfo
		widthBest, speedBest uint8
		widthBelow, slow     bool
	}{
		{"at its best", pi(mad.LinkWidth4X, 0x3, mad.LinkSpeedQDR, 7, 0, 0), pi(0, 0x3, 0, 7, 0, 0), 2, 4, false, false},
		{"1X where both do 4X", pi(mad.LinkWidth1X, 0x3, mad.LinkSpeedQDR, 7, 0, 0), pi(0, 0x1f, 0, 7, 0, 0), 2, 4, true, false},
		{"the narrower end counts", pi(mad.LinkWidth4X, 0xb, mad.LinkSpeedDDR, 7, 0, 0), pi(0, 0x3, 0, 3, 0, 0), 2, 2, false, false},
		{"2X ranks below 4X", pi(mad.LinkWidth2X, 0x13, mad.LinkSpeedSDR, 1, 0, 0), pi(0, 0x13, 0, 1, 0, 0), 2, 1, true, false},
		{"SDR where both do DDR", pi(mad.LinkWidth4X, 0x2, mad.LinkSpeedSDR, 3, 0, 0), pi(0, 0x2, 0, 7, 0, 0), 2, 2, false, true},
		// SDR+QDR against SDR+DDR share only SDR.
		{"sets with gaps", pi(mad.LinkWidth4X, 0x2, mad.LinkSpeedSDR, 5, 0, 0), pi(0, 0x2, 0, 3, 0, 0), 2, 1, false, false},
		{"nothing in common", pi(mad.LinkWidth4X, 0x2, mad.LinkSpeedSDR, 1, 0, 0), pi(0, 0x1, 0, 2, 0, 0), 0, 0, false, false},
		// Bit 3 of LinkSpeedSupported is reserved: no speed.
		{"reserved speed bit", pi(mad.LinkWidth4X, 0x2, mad.LinkSpeedQDR, 0xf, 0, 0), pi(0, 0x2, 0, 0xf, 0, 0), 2, 4, false, false},
	} {
		l := CompareLink(End{Info: tc.local}, &End{Info: tc.remote}, Supported)
		if l.Width.Best != tc.widthBest || l.Width.Below() != tc.widthBelow || l.Speed.Best != tc.speedBest || l.Speed.Below() != tc.slow {
			t.Errorf("%s: width %+v (below %v), speed %+v (below %v)", tc.name, l.Width, l.Width.Below(), l.Speed, l.Speed.Below())
		}
		if l.Width.Local != tc.local.LinkWidthSupported || l.Width.Remote != tc.remote.LinkWidthSupported || l.Width.Active != uint8(tc.local.LinkWidthActive) {
			t.Errorf("%s: width sets %+v", tc.name, l.Width)
		}
	}
	// Without its far end a port is judged alone.
	l := CompareLink(End{Info: pi(mad.LinkWidth4X, 0xb, mad.LinkSpeedDDR, 7, 0, 0)}, nil, Supported)
	if l.Width.Best != uint8(mad.LinkWidth12X) || l.Width.Remote != 0xb || l.Speed.Best != uint8(mad.LinkSpeedQDR) {
		t.Errorf("alone: %+v %+v", l.Width, l.Speed)
	}
}

func TestCompareLinkExtendedSpeeds(t *testing.T) {
	edr := pi(mad.LinkWidth4X, 2, mad.LinkSpeedQDR, 7, mad.LinkSpeedExtFDR, 3)
	peer := pi(mad.LinkWidth4X, 2, mad.LinkSpeedQDR, 7, 0, 3)
	l := CompareLink(End{Info: edr, CapabilityMask: extCap}, &End{Info: peer, CapabilityMask: extCap}, Supported)
	if !l.ExtSpeeds || !l.UsesExtSpeeds() || l.ExtSpeed.Best != uint8(mad.LinkSpeedExtEDR) || !l.ExtSpeed.Below() {
		t.Errorf("FDR where both do EDR: %+v %+v", l, l.ExtSpeed)
	}
	// One end without the capability bit: its LinkSpeedExt fields mean
	// nothing.
	l = CompareLink(End{Info: edr, CapabilityMask: extCap}, &End{Info: peer}, Supported)
	if l.ExtSpeeds || l.UsesExtSpeeds() {
		t.Errorf("one end without IsExtendedSpeedsSupported: %+v", l)
	}
	// Both announce them, one has none.
	none := pi(mad.LinkWidth4X, 2, mad.LinkSpeedQDR, 7, 0, 0)
	l = CompareLink(End{Info: edr, CapabilityMask: extCap}, &End{Info: none, CapabilityMask: extCap}, Supported)
	if !l.ExtSpeeds || l.UsesExtSpeeds() || l.ExtSpeed.Best != 0 || l.ExtSpeed.Below() {
		t.Errorf("an end without extended speeds: %+v %+v", l, l.ExtSpeed)
	}
	ndr := pi(mad.LinkWidth4X, 2, mad.LinkSpeedQDR, 7, mad.LinkSpeedExtNDR, 0xf)
	l = CompareLink(End{Info: ndr, CapabilityMask: extCap}, &End{Info: ndr, CapabilityMask: extCap}, Supported)
	if l.ExtSpeed.Best != uint8(mad.LinkSpeedExtNDR) || l.ExtSpeed.Below() {
		t.Errorf("NDR: %+v", l.ExtSpeed)
	}
}

func TestCompareLinkFDR10(t *testing.T) {
	qdr := pi(mad.LinkWidth4X, 2, mad.LinkSpeedQDR, 7, 0, 0)
	fdr10 := &mad.MlnxExtPortInfo{LinkSpeedSupported: 1, LinkSpeedEnabled: 1}
	at := &mad.MlnxExtPortInfo{LinkSpeedSupported: 1, LinkSpeedEnabled: 1, LinkSpeedActive: 1}
	l := CompareLink(End{Info: qdr, Mlnx: fdr10}, &End{Info: qdr, Mlnx: fdr10}, Supported)
	if l.FDR10.Best != 1 || !l.FDR10.Below() {
		t.Errorf("QDR where both do FDR10: %+v", l.FDR10)
	}
	if l = CompareLink(End{Info: qdr, Mlnx: at}, &End{Info: qdr, Mlnx: fdr10}, Supported); l.FDR10.Below() {
		t.Errorf("at FDR10: %+v", l.FDR10)
	}
	if l = CompareLink(End{Info: qdr, Mlnx: fdr10}, &End{Info: qdr}, Supported); l.FDR10.Best != 0 || l.FDR10.Below() {
		t.Errorf("the far end's extension not read: %+v", l.FDR10)
	}
	// Enabled judges by the extension's LinkSpeedEnabled.
	off := &mad.MlnxExtPortInfo{LinkSpeedSupported: 1}
	if l = CompareLink(End{Info: qdr, Mlnx: fdr10}, &End{Info: qdr, Mlnx: off}, Enabled); l.FDR10.Best != 0 {
		t.Errorf("FDR10 not enabled at the far end: %+v", l.FDR10)
	}
}

// Enabled: 255, 15 and 31 mean all that is supported.
func TestCompareLinkEnabled(t *testing.T) {
	local := &mad.PortInfo{LinkWidthEnabled: 255, LinkWidthSupported: 0x3, LinkWidthActive: mad.LinkWidth1X,
		LinkSpeedEnabled: 15, LinkSpeedSupported: 7, LinkSpeedActive: mad.LinkSpeedQDR,
		LinkSpeedExtEnabled: 31, LinkSpeedExtSupported: 3, LinkSpeedExtActive: mad.LinkSpeedExtEDR}
	remote := &mad.PortInfo{LinkWidthEnabled: 0x1, LinkWidthSupported: 0x3, LinkSpeedEnabled: 0x3, LinkSpeedSupported: 7,
		LinkSpeedExtEnabled: 1, LinkSpeedExtSupported: 3}
	l := CompareLink(End{Info: local, CapabilityMask: extCap}, &End{Info: remote, CapabilityMask: extCap}, Enabled)
	if l.Width.Local != 0x3 || l.Width.Best != 1 || l.Width.Below() {
		t.Errorf("width: %+v", l.Width)
	}
	if l.Speed.Local != 7 || l.Speed.Best != 2 || !l.Speed.Below() {
		t.Errorf("speed: %+v", l.Speed)
	}
	if l.ExtSpeed.Local != 3 || l.ExtSpeed.Best != 1 || !l.ExtSpeed.Below() {
		t.Errorf("extended speed: %+v", l.ExtSpeed)
	}
	if s := CompareLink(End{Info: local}, &End{Info: remote}, Supported); s.Width.Best != 2 || s.Speed.Best != 4 {
		t.Errorf("supported: %+v %+v", s.Width, s.Speed)
	}
}

// EndOf takes a switch port's capability mask from the switch's port 0.
func TestEndOf(t *testing.T) {
	sw := &discovery.Node{Type: discovery.NodeSwitch, NumPorts: 1, Ports: make([]*discovery.Port, 2)}
	sw.Ports[0] = &discovery.Port{Node: sw, PortInfo: mad.Encode(&mad.PortInfo{CapabilityMask: extCap})}
	sw.Ports[1] = &discovery.Port{Node: sw, Num: 1, PortInfo: mad.Encode(pi(mad.LinkWidth4X, 2, mad.LinkSpeedQDR, 7, mad.LinkSpeedExtEDR, 3)),
		MlnxExtPortInfo: mad.Encode(&mad.MlnxExtPortInfo{LinkSpeedSupported: 1})}
	e := EndOf(sw.Ports[1])
	if e.CapabilityMask != extCap || e.Info.LinkSpeedExtActive != mad.LinkSpeedExtEDR || e.Mlnx == nil || e.Mlnx.LinkSpeedSupported != 1 {
		t.Errorf("switch port: %+v %+v", e, e.Mlnx)
	}
	sw.Ports[0] = nil
	if e := EndOf(sw.Ports[1]); e.CapabilityMask != 0 {
		t.Errorf("a switch without port 0 has no capability mask: %#x", e.CapabilityMask)
	}
	ca := &discovery.Node{Type: discovery.NodeCA, NumPorts: 1, Ports: make([]*discovery.Port, 2)}
	ca.Ports[1] = &discovery.Port{Node: ca, Num: 1, PortInfo: mad.Encode(&mad.PortInfo{CapabilityMask: extCap})}
	if e := EndOf(ca.Ports[1]); e.CapabilityMask != extCap || e.Mlnx != nil {
		t.Errorf("CA port: %+v", e)
	}
	if BestWidth(0x13) != mad.LinkWidth4X || BestSpeed(0xf) != mad.LinkSpeedQDR || BestExtSpeed(0) != 0 {
		t.Error("Best*")
	}
}

// Below judges the speed of the fastest kind both ends have, by what they
// enable for the exporter's ib_port_link_degraded.
func TestLinkBelowByWhatIsEnabled(t *testing.T) {
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
		p := linkedCAs(&c.a, &c.b)
		local, remote := EndOf(p), EndOf(p.Remote)
		if got := CompareLink(local, &remote, Enabled).Below(); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// linkedCAs makes two CA ports linked to each other with PortInfos a and
// b.
func linkedCAs(a, b *mad.PortInfo) *discovery.Port {
	pa := &discovery.Port{Node: &discovery.Node{Type: discovery.NodeCA}, Num: 1, PortInfo: mad.Encode(a)}
	pb := &discovery.Port{Node: &discovery.Node{Type: discovery.NodeCA}, Num: 1, PortInfo: mad.Encode(b)}
	pa.Remote, pb.Remote = pb, pa
	return pa
}

// BestSpeed names the best speed of the kind of speed that decides the
// link's, as ibnetdiscover names speeds.
func TestBestSpeed(t *testing.T) {
	qdr := pi(mad.LinkWidth4X, 2, mad.LinkSpeedSDR, 7, 0, 0)
	edr := pi(mad.LinkWidth4X, 2, mad.LinkSpeedQDR, 7, mad.LinkSpeedExtEDR, 0xf)
	xdr := pi(mad.LinkWidth4X, 2, mad.LinkSpeedQDR, 7, mad.LinkSpeedExtNDR, 0xf)
	xdr.LinkSpeedExtSupported2 = 1
	fdr10 := &mad.MlnxExtPortInfo{LinkSpeedSupported: 1}
	xdrEnd := End{Info: xdr, CapabilityMask: extCap, CapabilityMask2: uint16(mad.PortCapMask2ExtSpeeds2)}
	for _, tc := range []struct {
		name        string
		local, peer End
		want        string
	}{
		{"SDR to QDR", End{Info: qdr}, End{Info: qdr}, "QDR"},
		{"extended speeds", End{Info: edr, CapabilityMask: extCap}, End{Info: edr, CapabilityMask: extCap}, "NDR"},
		{"extended speeds not announced", End{Info: edr, CapabilityMask: extCap}, End{Info: edr}, "QDR"},
		{"FDR10", End{Info: qdr, Mlnx: fdr10}, End{Info: qdr, Mlnx: fdr10}, "FDR10"},
		{"XDR", xdrEnd, xdrEnd, "XDR"},
		{"nothing in common", End{Info: pi(0, 2, 0, 1, 0, 0)}, End{Info: pi(0, 2, 0, 2, 0, 0)}, ""},
	} {
		if got := CompareLink(tc.local, &tc.peer, Supported).BestSpeed(); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
