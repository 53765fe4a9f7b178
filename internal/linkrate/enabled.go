package linkrate

import (
	"math/bits"

	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/mad"
)

// BelowEnabled tells whether p's link runs narrower or slower than the
// best width and speed both its ends are enabled for: a link trains to
// that (IBA 5.6.4.1), so anything less is a bad lane or cable. iblinkinfo's
// "Could be ..." (render's get_max_msg) compares with what the ends
// support instead, which also flags every link an administrator limited on
// purpose (and every link of ibsim, whose ports support 12X QDR and enable
// 4X SDR).
func BelowEnabled(p *discovery.Port) bool {
	r := p.Remote
	if r == nil || r.PortInfo == nil {
		return false
	}
	pi, ri := p.Info(), r.Info()
	if w := widest(enabled(pi.LinkWidthEnabled, pi.LinkWidthSupported, 0xFF) & enabled(ri.LinkWidthEnabled, ri.LinkWidthSupported, 0xFF)); w != 0 && w&uint8(pi.LinkWidthActive) == 0 {
		return true
	}
	ci, rci := Of(p).CI, Of(r).CI
	// XDR lives in the LinkSpeedExt*2 fields (IBA 1.7), on ports whose
	// CapabilityMask2 says they have them.
	xdr := uint8(mad.LinkSpeedExt2XDR)
	if hasExtSpeeds2(ci) && hasExtSpeeds2(rci) && enabled(pi.LinkSpeedExtEnabled2, pi.LinkSpeedExtSupported2, 7)&enabled(ri.LinkSpeedExtEnabled2, ri.LinkSpeedExtSupported2, 7)&xdr != 0 {
		return uint8(pi.LinkSpeedExtActive2)&xdr == 0
	}
	if pi.LinkSpeedExtActive2 != 0 {
		return false // the fastest there is
	}
	extSpeeds := uint32(mad.PortCapMaskExtendedSpeeds)
	if ci != nil && rci != nil && ci.CapabilityMask&extSpeeds != 0 && rci.CapabilityMask&extSpeeds != 0 {
		// 30 in LinkSpeedExtEnabled: extended speeds disabled; 31: all
		// supported ones (IBA 14.2.5.6).
		pe, re := enabled(pi.LinkSpeedExtEnabled, pi.LinkSpeedExtSupported, 31), enabled(ri.LinkSpeedExtEnabled, ri.LinkSpeedExtSupported, 31)
		if pe != 30 && re != 30 && pe&re&0xF != 0 {
			return highest(pe&re&0xF)&uint8(pi.LinkSpeedExtActive) == 0
		}
	}
	fdr10 := uint8(mad.MlnxLinkSpeedFDR10)
	if MlnxExt(p).LinkSpeedEnabled&fdr10 != 0 && MlnxExt(r).LinkSpeedEnabled&fdr10 != 0 {
		return MlnxExt(p).LinkSpeedActive&fdr10 == 0
	}
	if common := enabled(pi.LinkSpeedEnabled, pi.LinkSpeedSupported, 15) & enabled(ri.LinkSpeedEnabled, ri.LinkSpeedSupported, 15); common != 0 {
		return highest(common)&uint8(pi.LinkSpeedActive) == 0
	}
	return false
}

// hasExtSpeeds2 tells whether a port's capability masks (ci: port 0's on
// a switch) have the LinkSpeedExt*2 fields.
func hasExtSpeeds2(ci *mad.PortInfo) bool {
	return ci != nil && ci.CapabilityMask&uint32(mad.PortCapMaskCapabilityMask2) != 0 &&
		ci.CapabilityMask2&uint16(mad.PortCapMask2ExtSpeeds2) != 0
}

// enabled is a LinkWidthEnabled or LinkSpeed*Enabled value, with all the
// field's bits set (allSupported) read as "all supported" and so as
// supported.
func enabled(v, supported, allSupported uint8) uint8 {
	if v == allSupported {
		return supported
	}
	return v
}

// widest is the widest width of a LinkWidth set, 0 if none (IBA
// 14.2.5.6: 1X 1, 4X 2, 8X 4, 12X 8, 2X 16; 2X ranks below 4X).
func widest(set uint8) uint8 {
	for _, w := range []mad.LinkWidth{mad.LinkWidth12X, mad.LinkWidth8X, mad.LinkWidth4X, mad.LinkWidth2X, mad.LinkWidth1X} {
		if set&uint8(w) != 0 {
			return uint8(w)
		}
	}
	return 0
}

// highest is the highest bit of set, 0 if none.
func highest(set uint8) uint8 {
	if set == 0 {
		return 0
	}
	return 1 << (bits.Len8(set) - 1)
}
