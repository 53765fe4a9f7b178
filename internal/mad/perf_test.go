package mad

import (
	"fmt"
	"strings"
	"testing"
)

// perfquery -E, -D, --oprcvcounters, --flowctlcounters, --vloppackets,
// --vlopdata, --vlxmitflowctlerrors and --vlxmitcounters print
// "# NAME counters: Lid L port P" and the attribute with Dotted. ibsim
// answers these (and the counters were set to distinct values through its
// console before the captures; ibsim keeps no PortVLOpData for VL 15, so
// that one reads 0).
func TestGoldenPerfQueryDetails(t *testing.T) {
	for name, attr := range map[string]uint16{
		"tiny_perfquery_E":             AttrPortRcvErrorDetails,
		"tiny_perfquery_E_sw":          AttrPortRcvErrorDetails,
		"tiny_perfquery_D":             AttrPortXmitDiscardDetails,
		"tiny_perfquery_oprcv":         AttrPortOpRcvCounters,
		"tiny_perfquery_flowctl":       AttrPortFlowCtlCounters,
		"tiny_perfquery_vloppackets":   AttrPortVLOpPackets,
		"tiny_perfquery_vlopdata":      AttrPortVLOpData,
		"tiny_perfquery_vlxmitflowctl": AttrPortVLXmitFlowCtlUpdateErrors,
		"tiny_perfquery_vlxmitwait":    AttrPortVLXmitWaitCounters,
	} {
		t.Run(name, func(t *testing.T) {
			c := loadCapture(t, name)
			s := c.madsOf(t, attr)[0]
			f := strings.Fields(c.cmd)
			title := fmt.Sprintf("# %s counters: Lid %s port %s\n", s.Desc().Name, f[len(f)-2], f[len(f)-1])
			diffText(t, name, title+Dotted(s, nil), c.text)
		})
	}
}

// The PerfMgt attributes ibsim does not answer, from bytes with a distinct
// value in every 16-bit word, printed as libibmad prints them.
func TestPerfByHand(t *testing.T) {
	words := make([]byte, 192)
	for i := 0; i < len(words)/2; i++ {
		words[2*i], words[2*i+1] = byte(i), byte(i+0x10)
	}
	decode := func(s Struct) Struct {
		if err := s.Unmarshal(words); err != nil {
			t.Fatal(err)
		}
		return s
	}

	psc := decode(&PortSamplesControl{}).(*PortSamplesControl)
	// bytes 8..11: 04 14 05 15
	if psc.OpCode != 0 || psc.PortSelect != 0x10 || psc.Tick != 1 || psc.CounterWidth != 1 ||
		psc.CounterMask0 != 0 || psc.SampleMechanisms != 0x05 || psc.SampleStatus != 1 ||
		psc.OptionMask != 0x0616071708180919 || psc.Tag != 0x1222 || psc.CounterSelect[0] != 0x1323 ||
		psc.CounterSelect[14] != 0x2131 || psc.SamplesOnlyOptionMask != 0x2434253526362737 {
		t.Errorf("PortSamplesControl %+v", psc)
	}
	got := Dotted(psc, nil)
	for _, want := range []string{
		"OpCode:..........................0x00\n", "PortSelect:......................16\n",
		"CounterWidth:....................1\n",
		"CounterMasks1to9:................0x" + fmt.Sprintf("%08x", getBits(words, 37, 27)) + "\n",
		"CounterMasks10to14:..............0x" + fmt.Sprintf("%04x", getBits(words, 65, 15)) + "\n",
		"CounterSelect14:.................0x2131\n", "SamplesOnlyOptionMask:...........0x2434253526362737\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("PortSamplesControl Dotted lacks %q:\n%s", want, got)
		}
	}

	psr := decode(&PortSamplesResult{}).(*PortSamplesResult)
	if psr.Tag != 0x0010 || psr.SampleStatus != 1 || psr.Counter[0] != 0x02120313 || psr.Counter[14] != 0x1e2e1f2f {
		t.Errorf("PortSamplesResult %+v", psr)
	}
	if got := Dotted(psr, nil); !strings.HasPrefix(got, "Tag:.............................0x0010\nSampleStatus:....................0x01\n") {
		t.Errorf("PortSamplesResult Dotted:\n%s", got)
	}

	esc := decode(&PortExtendedSpeedsCounters{}).(*PortExtendedSpeedsCounters)
	if esc.PortSelect != 0x10 || esc.CounterSelect != 0x0414051506160717 || esc.SyncHeaderErrorCounter != 0x0818 ||
		esc.UnknownBlockCounter != 0x0919 || esc.ErrorDetectionCounter[0] != 0x0a1a || esc.ErrorDetectionCounter[11] != 0x1525 ||
		esc.FECCorrectableBlockCtr[0] != 0x16261727 || esc.FECUncorrectableBlockCtr[11] != 0x44544555 {
		t.Errorf("PortExtendedSpeedsCounters %+v", esc)
	}
	rs := decode(&PortExtendedSpeedsCountersRSFEC{}).(*PortExtendedSpeedsCountersRSFEC)
	if rs.FECCorrectableSymbolCtr[0] != esc.FECCorrectableBlockCtr[0] || rs.PortFECCorrectableBlockCtr != 0x46564757 ||
		rs.PortFECUncorrectableBlockCtr != 0x48584959 || rs.PortFECCorrectedSymbolCtr != 0x4a5a4b5b {
		t.Errorf("PortExtendedSpeedsCountersRSFEC %+v", rs)
	}
	got = Dotted(rs, nil)
	if !strings.HasPrefix(got, "PortSelect:......................16\nCounterSelect:...................0x0414051506160717\n"+
		"SyncHeaderErrorCounter:..........2072\nUnknownBlockCounter:.............2329\nFECCorrectableSymbolCtrLane0:....371595047\n") ||
		!strings.HasSuffix(got, "PortFECCorrectedSymbolCtr:.......1247431515\n") {
		t.Errorf("RS-FEC Dotted:\n%s", got)
	}

	xsl := decode(&PortXmitDataSL{}).(*PortXmitDataSL)
	rsl := decode(&PortRcvDataSL{}).(*PortRcvDataSL)
	if xsl.PortXmitDataSL[0] != 0x02120313 || rsl.PortRcvDataSL[15] != 0x20302131 {
		t.Errorf("data per SL %+v %+v", xsl, rsl)
	}
	if got := Dotted(xsl, nil); !strings.Contains(got, "\nXmtDataSL0:......................34734867\n") {
		t.Errorf("PortXmitDataSL Dotted:\n%s", got)
	}
	sw := decode(&SwPortVLCongestion{}).(*SwPortVLCongestion)
	if sw.SwPortVLCongestion[15] != 0x1121 || !strings.Contains(Dotted(sw, nil), "SWPortVLCongestion15:............4385\n") {
		t.Errorf("SwPortVLCongestion %+v", sw)
	}
	vt := decode(&PortVLXmitTimeCong{}).(*PortVLXmitTimeCong)
	if vt.PortVLXmitTimeCong[14] != 0x1e2e1f2f || strings.Contains(Dotted(vt, nil), "PortVLXmitTimeCong15") {
		t.Errorf("PortVLXmitTimeCong %+v", vt)
	}
}
