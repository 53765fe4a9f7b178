package health

import (
	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/linkrate"
	"github.com/ibtool/ibtool/internal/mad"
)

// A link below its capability: what a link runs at against the best
// width and speed both its ends can do. This is the one place that
// knows it; iblinkinfo's "Could be ..." texts, ibportstate's peer
// warnings, the ibcheck family's width and speed checks and the
// diagnosis all judge a CompareLink.

// Basis is which of a port's sets of widths and speeds a link is judged
// by.
type Basis uint8

const (
	// Supported judges by what the ports can do (LinkWidthSupported,
	// LinkSpeedSupported, LinkSpeedExtSupported, and the FDR10 bit of
	// the Mellanox extension's LinkSpeedSupported).
	Supported Basis = iota
	// Enabled judges by what they are enabled to do, as ibportstate
	// does: LinkWidthEnabled 255, LinkSpeedEnabled 15 and
	// LinkSpeedExtEnabled 31 mean "all supported" (IBA 14.2.5.6), the
	// FDR10 bit is the extension's LinkSpeedEnabled's.
	Enabled
)

// End is one end of a link, as read.
type End struct {
	Info *mad.PortInfo
	// CapabilityMask is the mask that counts for the port: a switch's
	// port 0's (IBA 14.2.5.6: its external ports' is reserved), a CA's
	// port's own. Its IsExtendedSpeedsSupported bit says whether the
	// LinkSpeedExt fields mean anything.
	CapabilityMask uint32
	// CapabilityMask2 is the second mask, from the same port; its
	// extended speeds 2 bit says whether the LinkSpeedExt*2 fields (XDR)
	// mean anything. Zero unless CapabilityMask has IsCapabilityMask2Supported.
	CapabilityMask2 uint16
	// Mlnx is the port's Mellanox extended PortInfo (FDR10), nil when
	// it was not read.
	Mlnx *mad.MlnxExtPortInfo
}

// EndOf is a discovered port's End: its PortInfo, the capability mask
// of its node's port 0 on a switch (none when the switch has no port 0),
// and its Mellanox extension when the walk read one.
func EndOf(p *discovery.Port) End { return EndOfRate(p, linkrate.Of(p)) }

// EndOfRate is EndOf with the port's rate already had (its PortInfos
// decoded once).
func EndOfRate(p *discovery.Port, r linkrate.Rate) End {
	e := End{Info: r.PI}
	if r.CI != nil {
		e.CapabilityMask = r.CI.CapabilityMask
		if e.CapabilityMask&uint32(mad.PortCapMaskCapabilityMask2) != 0 {
			e.CapabilityMask2 = r.CI.CapabilityMask2
		}
	}
	if len(p.MlnxExtPortInfo) > 0 {
		m := linkrate.MlnxExt(p)
		e.Mlnx = &m
	}
	return e
}

// Axis is one dimension of a link: the value this end runs at, each
// end's set of values, and the best value both have.
type Axis struct {
	Active uint8 // this end's active value (a bit of the set)
	Local  uint8 // this end's set
	Remote uint8 // the far end's set; Local when the far end is not known
	Best   uint8 // the best value of Local&Remote; 0 when they share none
}

// Below tells whether the link runs at other than the best value both
// ends have (and they have one).
func (a Axis) Below() bool { return a.Best != 0 && a.Active != a.Best }

// Link is a link's width and speeds against what both its ends can do.
type Link struct {
	Basis Basis
	Width Axis // LinkWidth bits: 1X, 4X, 8X, 12X, 2X
	Speed Axis // LinkSpeed bits: SDR, DDR, QDR
	// ExtSpeeds: both ends announce IsExtendedSpeedsSupported, so
	// ExtSpeed (LinkSpeedExt bits: FDR, EDR, HDR, NDR) means something.
	ExtSpeeds bool
	ExtSpeed  Axis
	// ExtDisabled: judged by what is enabled, an end has its extended
	// speeds disabled (LinkSpeedExtEnabled 30, IBA 14.2.5.6). ExtSpeed
	// still holds the bits as they read, as ibportstate compares them.
	ExtDisabled bool
	// FDR10 is Mellanox's FDR10, its one bit (MlnxLinkSpeedFDR10); zero
	// where an end's extension was not read.
	FDR10 Axis
	// ExtSpeeds2: both ends announce the LinkSpeedExt*2 fields
	// (CapabilityMask2, IBA 1.7), so ExtSpeed2 (XDR) means something.
	ExtSpeeds2 bool
	ExtSpeed2  Axis
}

// Below tells whether the link runs narrower or slower than the best
// both ends have: its width, and its speed on the fastest kind of speed
// both ends have (XDR, then the extended speeds, then FDR10, then SDR to
// QDR), as a link trains to the best it can.
func (l Link) Below() bool { return l.Width.Below() || l.SpeedBelow() }

// SpeedBelow tells whether the link runs slower than the best both ends
// have, on the fastest kind of speed both have.
func (l Link) SpeedBelow() bool { return l.speedAxis().Below() }

// speedAxis is the speed axis that decides the link's speed.
func (l Link) speedAxis() Axis {
	a, _ := l.speedKind()
	return a
}

// speedKind is the speed axis that decides the link's speed and the
// name of a value of it (ibnetdiscover's: "EDR"); a nil name when the
// link runs at XDR without both ends announcing it.
func (l Link) speedKind() (Axis, func(uint8) string) {
	switch {
	case l.ExtSpeeds2 && l.ExtSpeed2.Best != 0:
		return l.ExtSpeed2, func(uint8) string { return mad.SpeedCompatName(mad.ExtSpeedXDR, 0, false) }
	case l.ExtSpeed2.Active != 0:
		return Axis{}, nil // XDR, faster than anything else both could have
	case l.ExtSpeeds && !l.ExtDisabled && l.ExtSpeed.Best != 0:
		return l.ExtSpeed, func(v uint8) string { return mad.SpeedCompatName(uint32(v), 0, false) }
	case l.FDR10.Best != 0:
		return l.FDR10, func(uint8) string { return "FDR10" }
	}
	return l.Speed, func(v uint8) string { return mad.SpeedCompatName(0, mad.LinkSpeed(v), false) }
}

// BestSpeed is the name of the fastest speed both ends have on the kind
// of speed that decides the link's (ibnetdiscover's names: "NDR",
// "FDR10", "QDR"); "" when they share none.
func (l Link) BestSpeed() string {
	a, name := l.speedKind()
	if name == nil || a.Best == 0 {
		return ""
	}
	return name(a.Best)
}

// UsesExtSpeeds tells whether the link's speed is an extended one: both
// ends announce extended speeds and have some.
func (l Link) UsesExtSpeeds() bool {
	return l.ExtSpeeds && l.ExtSpeed.Local != 0 && l.ExtSpeed.Remote != 0
}

// The values of each axis, best first.
var (
	widthRank    = []uint8{uint8(mad.LinkWidth12X), uint8(mad.LinkWidth8X), uint8(mad.LinkWidth4X), uint8(mad.LinkWidth2X), uint8(mad.LinkWidth1X)}
	speedRank    = []uint8{uint8(mad.LinkSpeedQDR), uint8(mad.LinkSpeedDDR), uint8(mad.LinkSpeedSDR)}
	extSpeedRank = []uint8{uint8(mad.LinkSpeedExtNDR), uint8(mad.LinkSpeedExtHDR), uint8(mad.LinkSpeedExtEDR), uint8(mad.LinkSpeedExtFDR)}
	xdrRank      = []uint8{uint8(mad.LinkSpeedExt2XDR)}
	fdr10Rank    = []uint8{uint8(mad.MlnxLinkSpeedFDR10)}
)

// best is the first value of rank in set, 0 if none is.
func best(set uint8, rank []uint8) uint8 {
	for _, v := range rank {
		if set&v != 0 {
			return v
		}
	}
	return 0
}

// BestWidth is the widest width of a set of LinkWidth bits, 0 for none:
// by lanes, so 2X (bit 4) ranks below 4X.
func BestWidth(set uint8) mad.LinkWidth { return mad.LinkWidth(best(set, widthRank)) }

// BestSpeed is the fastest LinkSpeed of a set, 0 for none.
func BestSpeed(set uint8) mad.LinkSpeed { return mad.LinkSpeed(best(set, speedRank)) }

// BestExtSpeed is the fastest LinkSpeedExt of a set, 0 for none.
func BestExtSpeed(set uint8) mad.LinkSpeedExt { return mad.LinkSpeedExt(best(set, extSpeedRank)) }

// CompareLink judges the link of local (whose active values are judged)
// against remote, its far end; nil when that is not known, and then
// against what local alone can do.
func CompareLink(local End, remote *End, basis Basis) Link {
	l := Link{Basis: basis}
	lp := local.Info
	sets := func(e *End) (width, speed, ext, fdr10, xdr uint8) {
		pi := e.Info
		width, speed, ext, xdr = pi.LinkWidthSupported, pi.LinkSpeedSupported, pi.LinkSpeedExtSupported, pi.LinkSpeedExtSupported2
		if basis == Enabled {
			width = enabledSet(pi.LinkWidthEnabled, width, 255)
			speed = enabledSet(pi.LinkSpeedEnabled, speed, 15)
			ext = enabledSet(pi.LinkSpeedExtEnabled, ext, 31)
			xdr = enabledSet(pi.LinkSpeedExtEnabled2, xdr, 7)
		}
		if e.Mlnx != nil {
			fdr10 = e.Mlnx.LinkSpeedSupported
			if basis == Enabled {
				fdr10 = e.Mlnx.LinkSpeedEnabled
			}
			fdr10 &= uint8(mad.MlnxLinkSpeedFDR10)
		}
		return width, speed, ext, fdr10, xdr
	}
	w, s, x, f, x2 := sets(&local)
	rw, rs, rx, rf, rx2 := w, s, x, f, x2
	extCaps := local.CapabilityMask&uint32(mad.PortCapMaskExtendedSpeeds) != 0
	ext2Caps := local.CapabilityMask2&uint16(mad.PortCapMask2ExtSpeeds2) != 0
	if remote != nil {
		rw, rs, rx, rf, rx2 = sets(remote)
		extCaps = extCaps && remote.CapabilityMask&uint32(mad.PortCapMaskExtendedSpeeds) != 0
		ext2Caps = ext2Caps && remote.CapabilityMask2&uint16(mad.PortCapMask2ExtSpeeds2) != 0
	}
	var fdr10Active uint8
	if local.Mlnx != nil {
		fdr10Active = local.Mlnx.LinkSpeedActive & uint8(mad.MlnxLinkSpeedFDR10)
	}
	l.Width = axis(uint8(lp.LinkWidthActive), w, rw, widthRank)
	l.Speed = axis(uint8(lp.LinkSpeedActive), s, rs, speedRank)
	l.ExtSpeeds = extCaps
	l.ExtDisabled = basis == Enabled && (lp.LinkSpeedExtEnabled == 30 || remote != nil && remote.Info.LinkSpeedExtEnabled == 30)
	l.ExtSpeed = axis(uint8(lp.LinkSpeedExtActive), x, rx, extSpeedRank)
	l.FDR10 = axis(fdr10Active, f, rf, fdr10Rank)
	l.ExtSpeeds2 = ext2Caps
	l.ExtSpeed2 = axis(uint8(lp.LinkSpeedExtActive2), x2, rx2, xdrRank)
	return l
}

func axis(active, local, remote uint8, rank []uint8) Axis {
	return Axis{Active: active, Local: local, Remote: remote, Best: best(local&remote, rank)}
}

// enabledSet is an enabled set, or the supported one where enabled says
// "all supported".
func enabledSet(enabled, supported, all uint8) uint8 {
	if enabled == all {
		return supported
	}
	return enabled
}
