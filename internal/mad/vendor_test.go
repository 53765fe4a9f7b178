package mad

import (
	"fmt"
	"strings"
	"testing"
)

// Notices of the generic traps decode their details (OpenSM's
// ib_mad_notice_attr_t layouts).
func TestNoticeDetails(t *testing.T) {
	notice := func(trap uint16, details []byte) *Notice {
		n := &Notice{IsGeneric: 1, Type: NoticeTypeInfo, ProducerType: 2, TrapNumber: trap, IssuerLID: 7}
		copy(n.DataDetails[:], details)
		b := Encode(n)
		var back Notice
		if err := back.Unmarshal(b); err != nil || back != *n {
			t.Fatalf("Notice round trip: %+v %v", back, err)
		}
		return n
	}
	gid := []byte{0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 2, 0xc9, 3, 0, 0, 0x12, 0x34}

	d := NoticeDetails(notice(64, append(make([]byte, 6), gid...))).(*NoticeTrap64)
	if d.GID.String() != "fe80::2:c903:0:1234" {
		t.Errorf("trap 64 %+v", d)
	}
	if d := NoticeDetails(notice(128, []byte{0, 9})).(*NoticeTrap128); d.LID != 9 {
		t.Errorf("trap 128 %+v", d)
	}
	if d := NoticeDetails(notice(131, []byte{0, 0, 0, 5, 3})).(*NoticeTrap129); d.LID != 5 || d.PortNum != 3 {
		t.Errorf("trap 131 %+v", d)
	}
	d144 := NoticeDetails(notice(144, []byte{0, 0, 0, 5, 0, 1, 0, 0, 0x02, 0x48, 0, 0x2d, 0, 0x30})).(*NoticeTrap144)
	if d144.LID != 5 || d144.OtherLocalChanges != 1 || d144.CapabilityMask != 0x248 || d144.CapabilityMask2Change != 1 ||
		d144.HierarchyInfoChange != 0 || d144.SMPriorityChange != 1 || d144.LinkSpeedEnabledChange != 1 ||
		d144.LinkWidthEnabledChange != 0 || d144.NodeDescriptionChange != 1 || d144.CapabilityMask2 != 0x30 {
		t.Errorf("trap 144 %+v", d144)
	}
	if d := NoticeDetails(notice(145, []byte{0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0xab, 0xcd})).(*NoticeTrap145); d.LID != 5 || d.SystemImageGUID != 0xabcd {
		t.Errorf("trap 145 %+v", d)
	}
	b := []byte{0, 0, 0, 5, 0, 6, 0x01, 0, 0, 0x15, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0x42, 0, 0x80 | 0x40 | 3, 0, 1, 4}
	if d := NoticeDetails(notice(256, b)).(*NoticeTrap256); d.LID != 5 || d.DRSLID != 6 || d.Method != 1 ||
		d.AttributeID != 0x15 || d.AttributeModifier != 1 || d.MKey != 0x42 || d.DRNotice != 1 || d.DRPathTruncated != 1 ||
		d.DRHopCount != 3 || d.DRNoticeReturnPath[1] != 1 || d.DRNoticeReturnPath[2] != 4 {
		t.Errorf("trap 256 %+v", d)
	}
	b = append([]byte{0, 0, 0, 5, 0, 6, 0, 0, 0xff, 0xff, 0x30, 0, 0, 9, 0, 0, 0, 1}, gid...)
	if d := NoticeDetails(notice(257, b)).(*NoticeTrap257); d.LID1 != 5 || d.LID2 != 6 || d.Key != 0xffff || d.SL != 3 ||
		d.QP1 != 9 || d.QP2 != 1 || d.GID1.String() != "fe80::2:c903:0:1234" {
		t.Errorf("trap 257 %+v", d)
	}
	b = append([]byte{0, 7, 0, 5, 0, 6, 0x80, 0x01, 0x20, 0, 0, 9, 0, 0, 0, 1}, gid...)
	b = append(b, make([]byte, 16)...)
	b = append(b, 0, 1, 8)
	if d := NoticeDetails(notice(259, b)).(*NoticeTrap259); d.DataValid != 7 || d.LID1 != 5 || d.PKey != 0x8001 || d.SL != 2 ||
		d.QP1 != 9 || d.QP2 != 1 || d.GID1[15] != 0x34 || d.SwLID != 1 || d.PortNum != 8 {
		t.Errorf("trap 259 %+v", d)
	}
	if NoticeDetails(notice(1, nil)) != nil || NoticeDetails(&Notice{TrapNumber: 128}) != nil {
		t.Error("details for an unknown trap or a vendor notice")
	}
}

// The whole-SMP structures read what header.go's builders write.
func TestSMPStructures(t *testing.T) {
	h := NewDRSMP(MethodGet, AttrNodeInfo, 0, []uint8{0, 1, 3})
	h[offHopPointer] = 2
	h[offStatus] |= DirectionBit >> 8
	copy(h.ReturnPath(), []byte{0, 4, 1})
	var dr DRSMP
	if err := dr.Unmarshal(h); err != nil {
		t.Fatal(err)
	}
	if dr.MgmtClass != MgmtClassSubnDR || dr.Method != MADMethodGet || dr.AttributeID != AttrNodeInfo || dr.D != 1 ||
		dr.HopPointer != 2 || dr.HopCount != 2 || dr.DrSLID != 0xffff || dr.DrDLID != 0xffff ||
		dr.InitialPath[1] != 1 || dr.InitialPath[2] != 3 || dr.ReturnPath[1] != 4 || dr.ReturnPath[2] != 1 {
		t.Errorf("DRSMP %+v", dr)
	}
	if got := Dotted(&dr, nil); !strings.Contains(got, DottedLine("DrSmpDirection", "1")+"\n"+DottedLine("DrSmpStatus", "0x0000")+"\n") ||
		!strings.Contains(got, DottedLine("DrSmpHopCnt", "2")) || !strings.Contains(got, DottedLine("MadMkey", notDisplayed)) {
		t.Errorf("DRSMP Dotted:\n%s", got)
	}
	if b := Encode(&dr); string(b) != string(h) {
		t.Errorf("DRSMP re-encodes to\n%x\nnot\n%x", b, []byte(h))
	}

	c := loadCapture(t, "tiny_nodeinfo_ca")
	var smp SMP
	if err := smp.Unmarshal(c.mads[0]); err != nil {
		t.Fatal(err)
	}
	var ni NodeInfo
	if err := ni.Unmarshal(smp.Data[:]); err != nil || smp.Common.R != 1 || smp.Common.AttributeID != AttrNodeInfo || ni.NodeType != NodeTypeCA {
		t.Errorf("SMP %+v / %+v", smp.Common, ni)
	}
	var pm PerfMgtHeader
	c = loadCapture(t, "tiny_perfquery_ca")
	if err := pm.Unmarshal(c.mads[0]); err != nil || pm.Common.MgmtClass != MgmtClassPerf || pm.Common.AttributeID != AttrClassPortInfo {
		t.Errorf("PerfMgtHeader %+v", pm)
	}
}

// The vendor classes ibping, ibsysstat and vendstat use; ibsim passes none
// of them on (it hands requests to QP1 only to an SM client).
func TestVendorByHand(t *testing.T) {
	h := NewRequest(ClassVendorOFA, 1, MethodGet, AttrOFAPing, 0)
	copy(h[37:], []byte{0x00, 0x14, 0x05})
	var vh Vendor2Header
	if err := vh.Unmarshal(h); err != nil || vh.OUI != OUIOpenIB || vh.Common.MgmtClass != MgmtClassVendorOFA {
		t.Errorf("Vendor2Header %+v %v", vh, err)
	}
	if got := Dotted(&vh, nil); !strings.HasSuffix(got, DottedLine("OUI", "001405")+"\n") {
		t.Errorf("Vendor2Header Dotted:\n%s", got)
	}
	copy(h[Vendor2DataOffset:], "node1.example.com")
	if d := LookupAttr(ClassVendorOFA, 0); d != descOFAPing || DataOffset(ClassVendorOFA) != 40 {
		t.Fatalf("ping attribute %v", d)
	}
	var pong OFAPing
	if err := pong.Unmarshal(h[40:]); err != nil || !strings.HasPrefix(string(pong.HostAndDomain[:]), "node1.example.com\x00") {
		t.Errorf("OFAPing %q", pong.HostAndDomain)
	}
	var cpu SysStatCPUInfo
	copy(h[40:], "cpu 0: model x MHZ 2000\ncpu 1: model x MHZ 2000\n\x00")
	if err := cpu.Unmarshal(h[40:]); err != nil || !strings.Contains(string(cpu.CPUInfo[:]), "cpu 1: model") {
		t.Errorf("SysStatCPUInfo %q", cpu.CPUInfo)
	}
	if d := LookupAttr(ClassVendorOFASysStat, 0x11); d != descSysStatHostInfo {
		t.Errorf("sysstat host attribute %v", d)
	}

	// vendstat -N of a ConnectX (is4_general_info_t), bytes from MAD byte 24.
	b := make([]byte, MlnxGeneralInfoSize)
	copy(b[8:], []byte{0x00, 0xa0, 0x10, 0x1b})
	copy(b[36:], []byte{0, 0, 0x12, 0x34})
	copy(b[40:], []byte{0, 2, 3, 4, 0, 0, 0, 0x99, 0x06, 0x15, 0x20, 0x24, 0, 0, 0x13, 0x45})
	copy(b[56:], "MT_0000000001")
	copy(b[72:], []byte{0, 0, 0, 7, 0, 0, 0, 16, 0, 0, 0, 28, 0, 0, 4, 2})
	copy(b[104:], []byte{0, 5, 6, 7})
	var gi MlnxGeneralInfo
	if err := gi.Unmarshal(b); err != nil {
		t.Fatal(err)
	}
	// vendstat's printf lines, from the decoded fields.
	got := fmt.Sprintf("hw_dev_rev:  0x%04x\nhw_dev_id:   0x%04x\nhw_uptime:   0x%08x\nfw_version:  %02d.%02d.%02d\n"+
		"fw_build_id: 0x%04x\nfw_date:     %02x/%02x/%04x\nfw_psid:     '%s'\nfw_ini_ver:  %d\nsw_version:  %02d.%02d.%02d\n",
		gi.HWRevision, gi.DeviceID, gi.Uptime, gi.FWExtMajor, gi.FWExtMinor, gi.FWExtSubMinor, gi.FWBuildID,
		gi.FWMonth, gi.FWDay, gi.FWYear, strings.TrimRight(string(gi.FWPSID[:]), "\x00"), gi.FWIniFileVersion,
		gi.SWMajor, gi.SWMinor, gi.SWSubMinor)
	want := "hw_dev_rev:  0x00a0\nhw_dev_id:   0x101b\nhw_uptime:   0x00001234\nfw_version:  16.28.1026\n" +
		"fw_build_id: 0x0099\nfw_date:     06/15/2024\nfw_psid:     'MT_0000000001'\nfw_ini_ver:  7\nsw_version:  05.06.07\n"
	if got != want {
		t.Errorf("vendstat -N:\n%s\nwant:\n%s", got, want)
	}
	if gi.FWMajor != 2 || gi.FWMinor != 3 || gi.FWSubMinor != 4 || gi.FWHour != 0x1345 {
		t.Errorf("MlnxGeneralInfo %+v", gi)
	}
	var is3 MlnxGeneralInfoIS3
	copy(b[76:], []byte{0, 1, 2, 3})
	if err := is3.Unmarshal(b); err != nil || is3.FWMajor != 2 || is3.SWMajor != 1 || is3.SWSubMinor != 3 || is3.FWIniFileVersion != 7 {
		t.Errorf("MlnxGeneralInfoIS3 %+v", is3)
	}
	if DataOffset(ClassVendorMlnx) != 24 || LookupAttr(ClassVendorMlnx, 0x17) != descMlnxGeneralInfo ||
		LookupAttr(ClassVendorMlnx, AttrClassPortInfo) != descClassPortInfo {
		t.Error("Mellanox class lookups")
	}
	var cs MlnxConfigSpaceAccess
	b = make([]byte, MlnxConfigSpaceAccessSize)
	copy(b[8+17*12:], []byte{0, 0x11, 0x01, 0x3c, 0, 0, 0, 5, 0xff, 0xff, 0xff, 0xff})
	if err := cs.Unmarshal(b); err != nil || cs.Record[17] != (MlnxConfigSpaceRecord{Address: 0x11013c, Data: 5, Mask: 0xffffffff}) {
		t.Errorf("MlnxConfigSpaceAccess %+v", cs.Record[17])
	}
	var cg MlnxCounterGroupInfo
	if err := cg.Unmarshal([]byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0xf, 0, 0, 1, 0}); err != nil ||
		cg.NumCounterGroups != 2 || cg.GroupMask != [2]uint32{0xf, 0x100} {
		t.Errorf("MlnxCounterGroupInfo %+v", cg)
	}
	var ccg MlnxConfigCounterGroup
	if err := ccg.Unmarshal([]byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 8}); err != nil ||
		ccg.GroupSelect != [2]uint8{1, 8} {
		t.Errorf("MlnxConfigCounterGroup %+v", ccg)
	}
}

// Packet headers of a MAD on QP1: LRH, BTH, DETH (and a GRH).
func TestPacketHeaders(t *testing.T) {
	var lrh LRH
	if err := lrh.Unmarshal([]byte{0xf0, 0x32, 0x00, 0x01, 0x00, 0x4a, 0x00, 0x02}); err != nil {
		t.Fatal(err)
	}
	if lrh != (LRH{VL: 15, LVer: 0, SL: 3, LNH: LNHLocal, DLID: 1, PktLen: 0x4a, SLID: 2}) {
		t.Errorf("LRH %+v", lrh)
	}
	var bth BTH
	if err := bth.Unmarshal([]byte{0x64, 0x80, 0xff, 0xff, 0xc0, 0, 0, 1, 0x80, 0, 0, 7}); err != nil {
		t.Fatal(err)
	}
	if bth != (BTH{OpCode: 0x64, SE: 1, PKey: 0xffff, FECN: 1, BECN: 1, DestQP: 1, A: 1, PSN: 7}) {
		t.Errorf("BTH %+v", bth)
	}
	var deth DETH
	if err := deth.Unmarshal([]byte{0x80, 0x01, 0, 0, 0, 0, 0, 1}); err != nil || deth != (DETH{QKey: 0x80010000, SrcQP: 1}) {
		t.Errorf("DETH %+v", deth)
	}
	b := make([]byte, GRHSize)
	copy(b, []byte{0x60, 0x12, 0x34, 0x56, 0x01, 0x00, 0x1b, 0x40})
	b[8], b[9] = 0xfe, 0x80
	b[39] = 1
	var grh GRH
	if err := grh.Unmarshal(b); err != nil || grh.IPVer != 6 || grh.TClass != 0x01 || grh.FlowLabel != 0x23456 ||
		grh.PayLen != 256 || grh.NxtHdr != 0x1b || grh.HopLmt != 64 || grh.SGID.Prefix() != 0xfe80000000000000 || grh.DGID[15] != 1 {
		t.Errorf("GRH %+v", grh)
	}
	var led LedInfo
	if err := led.Unmarshal([]byte{0x80, 0, 0, 0}); err != nil || led.LedMask != 1 {
		t.Errorf("LedInfo %+v", led)
	}
	var vd VendorDiag
	b = make([]byte, 64)
	b[1], b[4], b[63] = 2, 0xaa, 0xbb
	if err := vd.Unmarshal(b); err != nil || vd.NextIndex != 2 || vd.DiagData[0] != 0xaa || vd.DiagData[59] != 0xbb {
		t.Errorf("VendorDiag %+v", vd)
	}
}

// The status word, with the texts saquery reports a failed query with
// (sa_report_err), rebuilt for the status OpenSM returned to
// "saquery PKTR" under ibsim.
func TestMADStatus(t *testing.T) {
	report := func(status uint16) string {
		var st MADStatus
		if err := st.Unmarshal([]byte{byte(status >> 8), byte(status)}); err != nil {
			t.Fatal(err)
		}
		mad, sa := "", ""
		if status&0xff != 0 {
			busy, redirect := "", ""
			if st.Busy != 0 {
				busy = "BUSY"
			}
			if st.Redirect != 0 {
				redirect = "Redirection Required"
			}
			// saquery indexes its table with bits 7..2, so codes with
			// the reserved bits 7..5 set read "MAD UNKNOWN ERROR".
			code := MADInvalidField(status & 0xff >> 2).String()
			mad = fmt.Sprintf(" (%s; %s; %s)", busy, redirect, code)
		}
		if st.ClassStatus != 0 {
			sa = fmt.Sprintf(" SA(%s)", SAStatus(st.ClassStatus))
		}
		return fmt.Sprintf("ERROR: Query result returned 0x%04x, %s%s", status, mad, sa)
	}
	for status, want := range map[uint16]string{
		0x0200: "ERROR: Query result returned 0x0200,  SA(SA_ERR_REQ_INVALID)",
		0x0300: "ERROR: Query result returned 0x0300,  SA(SA_ERR_NO_RECORDS)",
		0x001d: "ERROR: Query result returned 0x001d,  (BUSY; ; MAD Invalid value in Attribute field(s) or Attribute Modifier)",
		0x0c06: "ERROR: Query result returned 0x0c06,  (; Redirection Required; MAD Bad version) SA(SA_ERR_UNKNOWN)",
		0x0080: "ERROR: Query result returned 0x0080,  (; ; MAD UNKNOWN ERROR)",
	} {
		if got := report(status); got != want {
			t.Errorf("status %#04x:\n got %q\nwant %q", status, got, want)
		}
	}
	var st MADStatus
	if err := st.Unmarshal([]byte{0x03, 0x1f}); err != nil || st != (MADStatus{ClassStatus: 3, InvalidField: MADInvalidFieldInvalidAttrValue, Redirect: 1, Busy: 1}) {
		t.Errorf("MADStatus %+v", st)
	}
}
