package render

import (
	"testing"

	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/mad"
)

// link is a CA's port 1 linked to a switch's port 1, with the PortInfos
// (and Mellanox extensions, nil for none) given; ext gives both ends'
// capability masks (the switch's on its port 0) IsExtendedSpeedsSupported.
func link(ca, sw *mad.PortInfo, caExt, swExt bool, caMlnx, swMlnx *mad.MlnxExtPortInfo) *discovery.Port {
	capMask := func(on bool) uint32 {
		if on {
			return uint32(mad.PortCapMaskExtendedSpeeds)
		}
		return 0
	}
	c := *ca
	c.CapabilityMask = capMask(caExt)
	cn := &discovery.Node{Type: discovery.NodeCA, NumPorts: 1, Ports: make([]*discovery.Port, 2)}
	sn := &discovery.Node{Type: discovery.NodeSwitch, NumPorts: 1, Ports: make([]*discovery.Port, 2)}
	cp := &discovery.Port{Node: cn, Num: 1, PortInfo: mad.Encode(&c)}
	sp := &discovery.Port{Node: sn, Num: 1, PortInfo: mad.Encode(sw)}
	sn.Ports[0] = &discovery.Port{Node: sn, PortInfo: mad.Encode(&mad.PortInfo{CapabilityMask: capMask(swExt)})}
	if caMlnx != nil {
		cp.MlnxExtPortInfo = mad.Encode(caMlnx)
	}
	if swMlnx != nil {
		sp.MlnxExtPortInfo = mad.Encode(swMlnx)
	}
	cn.Ports[1], sn.Ports[1] = cp, sp
	cp.Remote, sp.Remote = sp, cp
	return cp
}

// iblinkinfo's "Could be ..." texts, get_max_msg's: the width, then one
// speed: an extended one where both ends have them, else FDR10 where both
// have it, else a LinkSpeed.
func TestMaxMsg(t *testing.T) {
	port := func(w mad.LinkWidth, ws uint8, s mad.LinkSpeed, ss uint8, x mad.LinkSpeedExt, xs uint8) *mad.PortInfo {
		return &mad.PortInfo{LinkWidthActive: w, LinkWidthSupported: ws, LinkSpeedActive: s, LinkSpeedSupported: ss, LinkSpeedExtActive: x, LinkSpeedExtSupported: xs}
	}
	fdr10 := &mad.MlnxExtPortInfo{LinkSpeedSupported: 1}
	atFDR10 := &mad.MlnxExtPortInfo{LinkSpeedSupported: 1, LinkSpeedActive: 1}
	for _, tc := range []struct {
		name         string
		p            *discovery.Port
		width, speed string
	}{
		{"at its best", link(port(mad.LinkWidth4X, 3, mad.LinkSpeedQDR, 7, 0, 0), port(0, 3, 0, 7, 0, 0), false, false, nil, nil), "", ""},
		{"narrow and slow", link(port(mad.LinkWidth1X, 3, mad.LinkSpeedSDR, 7, 0, 0), port(0, 0x1f, 0, 3, 0, 0), false, false, nil, nil),
			"Could be 4X", "Could be 5.0 Gbps"},
		{"no width in common", link(port(mad.LinkWidth4X, 2, mad.LinkSpeedSDR, 1, 0, 0), port(0, 8, 0, 1, 0, 0), false, false, nil, nil),
			"Could be 1X", ""},
		{"FDR where both do EDR", link(port(mad.LinkWidth4X, 2, mad.LinkSpeedQDR, 7, mad.LinkSpeedExtFDR, 3), port(0, 2, 0, 7, 0, 3), true, true, nil, nil),
			"", "Could be 25.78125 Gbps"},
		{"one end without extended speeds", link(port(mad.LinkWidth4X, 2, mad.LinkSpeedDDR, 7, mad.LinkSpeedExtFDR, 3), port(0, 2, 0, 7, 0, 3), true, false, nil, nil),
			"", "Could be 10.0 Gbps"},
		{"QDR where both do FDR10", link(port(mad.LinkWidth4X, 2, mad.LinkSpeedQDR, 7, 0, 0), port(0, 2, 0, 7, 0, 0), false, false, fdr10, fdr10),
			"", "Could be FDR10 (Found link at QDR but expected speed is FDR10)"},
		{"SDR where both do FDR10", link(port(mad.LinkWidth4X, 2, mad.LinkSpeedSDR, 7, 0, 0), port(0, 2, 0, 7, 0, 0), false, false, fdr10, fdr10),
			"", "Could be FDR10"},
		{"at FDR10", link(port(mad.LinkWidth4X, 2, mad.LinkSpeedSDR, 7, 0, 0), port(0, 2, 0, 7, 0, 0), false, false, atFDR10, fdr10), "", ""},
	} {
		lp := &LinkPrinter{}
		if w, s := lp.maxMsg(tc.p); w != tc.width || s != tc.speed {
			t.Errorf("%s: %q %q, want %q %q", tc.name, w, s, tc.width, tc.speed)
		}
	}
}
