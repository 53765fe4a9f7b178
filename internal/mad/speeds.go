package mad

// Link speed naming across PortInfo's three speed fields and Mellanox's
// FDR10 bit, as the infiniband-diags tools combine them.

// PortCapMask2ExtSpeeds2 is CapabilityMask2 bit 11 (IBA 1.7): the port has
// the LinkSpeedExt*2 fields (XDR). libibmad 44 has no name for it.
const PortCapMask2ExtSpeeds2 PortCapMask2 = 0x0800

// ExtSpeedXDR is XDR in the aggregated extended speed of libibnetdisc 50+
// (LinkSpeedExt bits 0..3, LinkSpeedExt2 shifted to bit 5).
const ExtSpeedXDR = 0x20

// AggregateExtSpeed is libibnetdisc's ibnd_get_agg_linkspeedext: the active
// extended speed of port p, using the capability masks of capPort (port 0
// of a switch, p itself on a CA). 0 if the port has no extended speeds.
func AggregateExtSpeed(p, capPort *PortInfo) uint32 {
	if capPort == nil || capPort.CapabilityMask&uint32(PortCapMaskExtendedSpeeds) == 0 {
		return 0
	}
	if capPort.CapabilityMask&uint32(PortCapMaskCapabilityMask2) != 0 &&
		capPort.CapabilityMask2&uint16(PortCapMask2ExtSpeeds2) != 0 && p.LinkSpeedExtActive2 != 0 {
		return uint32(p.LinkSpeedExtActive2) << 5
	}
	return uint32(p.LinkSpeedExtActive)
}

// SpeedCompatName is ibnetdiscover's speed column (dump_linkspeedext_compat):
// SDR, DDR, QDR, FDR10, FDR, EDR, HDR, NDR, XDR, or "???". aggExt is
// AggregateExtSpeed, fdr10 the FDR10 bit of MlnxExtPortInfo.LinkSpeedActive.
func SpeedCompatName(aggExt uint32, speed LinkSpeed, fdr10 bool) string {
	switch aggExt {
	case 0:
		if fdr10 {
			return "FDR10"
		}
		switch speed {
		case LinkSpeedSDR:
			return "SDR"
		case LinkSpeedDDR:
			return "DDR"
		case LinkSpeedQDR:
			return "QDR"
		}
	case uint32(LinkSpeedExtFDR):
		return "FDR"
	case uint32(LinkSpeedExtEDR):
		return "EDR"
	case uint32(LinkSpeedExtHDR):
		return "HDR"
	case uint32(LinkSpeedExtNDR):
		return "NDR"
	case ExtSpeedXDR:
		return "XDR"
	}
	return "???"
}

// WidthCompatName is ibnetdiscover's width column (dump_linkwidth_compat):
// 1x, 4x, 8x, 12x, 2x or "??".
func WidthCompatName(w LinkWidth) string {
	switch w {
	case LinkWidth1X:
		return "1x"
	case LinkWidth4X:
		return "4x"
	case LinkWidth8X:
		return "8x"
	case LinkWidth12X:
		return "12x"
	case LinkWidth2X:
		return "2x"
	}
	return "??"
}

// ActiveSpeedText is the speed iblinkinfo and ibqueryerrors print for an
// active link: libibmad's text of LinkSpeedExtActive when the port has
// extended speeds and uses one, else "10.0 Gbps (FDR10)" for FDR10, else
// the text of LinkSpeedActive. With XDR (libibnetdisc 50+) "212.5 Gbps".
func ActiveSpeedText(p, capPort *PortInfo, fdr10 bool) string {
	switch ext := AggregateExtSpeed(p, capPort); {
	case ext == ExtSpeedXDR:
		return "212.5 Gbps"
	case ext != 0:
		return LinkSpeedExt(ext).String()
	case fdr10:
		return "10.0 Gbps (FDR10)"
	}
	return p.LinkSpeedActive.String()
}
