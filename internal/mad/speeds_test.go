package mad

import "testing"

func TestSpeedNames(t *testing.T) {
	ca := &PortInfo{CapabilityMask: uint32(PortCapMaskExtendedSpeeds | PortCapMaskCapabilityMask2),
		CapabilityMask2: uint16(PortCapMask2ExtSpeeds2), LinkSpeedActive: LinkSpeedQDR,
		LinkSpeedExtActive: LinkSpeedExtEDR, LinkWidthActive: LinkWidth4X}
	if got := SpeedCompatName(AggregateExtSpeed(ca, ca), ca.LinkSpeedActive, false); got != "EDR" {
		t.Errorf("EDR port: %s", got)
	}
	if got := ActiveSpeedText(ca, ca, false); got != "25.78125 Gbps" {
		t.Errorf("EDR text: %s", got)
	}
	ca.LinkSpeedExtActive2 = LinkSpeedExt2XDR
	if got := SpeedCompatName(AggregateExtSpeed(ca, ca), ca.LinkSpeedActive, false); got != "XDR" {
		t.Errorf("XDR port: %s", got)
	}
	if got := ActiveSpeedText(ca, ca, false); got != "212.5 Gbps" {
		t.Errorf("XDR text: %s", got)
	}
	noExt := &PortInfo{LinkSpeedActive: LinkSpeedQDR, LinkSpeedExtActive: LinkSpeedExtEDR}
	if got := SpeedCompatName(AggregateExtSpeed(noExt, noExt), noExt.LinkSpeedActive, true); got != "FDR10" {
		t.Errorf("FDR10: %s", got)
	}
	if got := ActiveSpeedText(noExt, noExt, true); got != "10.0 Gbps (FDR10)" {
		t.Errorf("FDR10 text: %s", got)
	}
	if got := ActiveSpeedText(noExt, noExt, false); got != "10.0 Gbps" {
		t.Errorf("QDR text: %s", got)
	}
	if got := SpeedCompatName(0, LinkSpeedSDR, false); got != "SDR" {
		t.Errorf("SDR: %s", got)
	}
	if got := SpeedCompatName(16, LinkSpeedSDR, false); got != "???" {
		t.Errorf("16: %s", got)
	}
	if WidthCompatName(LinkWidth12X) != "12x" || WidthCompatName(3) != "??" {
		t.Error("width names")
	}
}
