package mad

import (
	"strings"
	"testing"
)

// ibsim has no congestion control, so the CC attributes are checked from
// hand-made bytes, printed as ibccquery prints them with libibmad.
func TestCCByHand(t *testing.T) {
	check := func(s Struct, b []byte, want string) {
		t.Helper()
		if err := s.Unmarshal(b); err != nil {
			t.Fatal(err)
		}
		if got := Dotted(s, nil); got != want {
			t.Errorf("%s Dotted:\n%s\nwant:\n%s", s.Desc().Name, got, want)
		}
		if got := Encode(s); string(got) != string(b[:s.Desc().Size]) {
			t.Errorf("%s re-encodes to %x", s.Desc().Name, got)
		}
	}
	line := func(label, value string) string { return DottedLine(label, value) + "\n" }

	check(&CongestionInfo{}, []byte{0x00, 0x01, 0x02, 0x00},
		line("CongestionInfo", "0x0001")+line("ControlTableCap", "2"))
	check(&CongestionKeyInfo{}, []byte{1, 2, 3, 4, 5, 6, 7, 8, 0x80, 0, 0, 16, 0, 5},
		line("CC_Key", "0x0102030405060708")+line("CC_KeyProtectBit", "1")+
			line("CC_KeyLeasePeriod", "16")+line("CC_KeyViolations", "5"))

	// A switch log: flags, 3 events, a port map with port 1, one event.
	b := make([]byte, CongestionLogSwitchSize)
	copy(b, []byte{1, 0x80, 0, 3, 0, 0, 0x03, 0xe8})
	b[8+31] = 0x02
	copy(b[40:], []byte{0, 2, 0, 3, 0x10, 0, 0, 0, 0, 0, 0, 99})
	var generic CongestionLog
	if err := generic.Unmarshal(b); err != nil || generic.LogType != CCLogTypeSwitch || generic.CongestionFlags != 0x80 {
		t.Errorf("CongestionLog %+v %v", generic, err)
	}
	if got := Dotted(&generic, nil); got != line("LogType", "1")+line("CongestionFlags", "0x80") {
		t.Errorf("CongestionLog Dotted:\n%s", got)
	}
	var sw CongestionLogSwitch
	if err := sw.Unmarshal(b); err != nil {
		t.Fatal(err)
	}
	if sw.LogEventsCounter != 3 || sw.CurrentTimeStamp != 1000 || sw.PortMap[31] != 2 ||
		sw.Event[0] != (CongestionLogEventSwitch{SLID: 2, DLID: 3, SL: 1, Timestamp: 99}) || sw.Event[1] != (CongestionLogEventSwitch{}) {
		t.Errorf("CongestionLogSwitch %+v", sw)
	}
	if got := Dotted(&sw.Event[0], nil); got != line("SLID", "2")+line("DLID", "3")+line("SL", "1")+line("Timestamp", "99") {
		t.Errorf("switch event Dotted:\n%s", got)
	}
	if got := Dotted(&sw, nil); !strings.HasPrefix(got, line("LogType", "1")+line("CongestionFlags", "0x80")+
		line("LogEventsCounter", "3")+line("CurrentTimeStamp", "1000")+line("PortMap", strings.Repeat("00", 31)+"02")) {
		t.Errorf("CongestionLogSwitch Dotted:\n%s", got)
	}

	// A CA log: SL 2's threshold, one event.
	b = make([]byte, CongestionLogCASize)
	copy(b, []byte{2, 0, 0, 1, 0, 4, 0, 0, 0, 0, 0x07, 0xd0})
	copy(b[12:], []byte{0x00, 0x01, 0x02, 0x21, 0x00, 0x00, 0x33, 0, 0, 5, 0, 6, 0, 0, 1, 0})
	var ca CongestionLogCA
	if err := ca.Unmarshal(b); err != nil {
		t.Fatal(err)
	}
	if ca.ThresholdEventCounter != 1 || ca.ThresholdCongestionEventMap != 4 || ca.CurrentTimeStamp != 2000 ||
		ca.Event[0] != (CongestionLogEventCA{LocalQP: 0x102, SL: 2, ServiceType: 1, RemoteQP: 0x33, LocalLID: 5, RemoteLID: 6, Timestamp: 256}) {
		t.Errorf("CongestionLogCA %+v", ca)
	}
	if got := Dotted(&ca.Event[0], nil); got != line("Local_QP_CN_Entry", "258")+line("SL_CN_Entry", "2")+
		line("Service_Type_CN_Entry", "0x01")+line("Remote_QP_Number_CN_Entry", "51")+line("Local_LID_CN", "5")+
		line("Remote_LID_CN_Entry", "6")+line("Timestamp_CN_Entry", "256") {
		t.Errorf("CA event Dotted:\n%s", got)
	}

	b = make([]byte, SwitchCongestionSettingSize)
	copy(b, []byte{0, 0, 0, 3})
	b[4+31], b[36+31] = 0x06, 0x02
	copy(b[68:], []byte{0xa0, 64, 0xb0, 0, 0, 10, 0, 200})
	check(&SwitchCongestionSetting{}, b, line("Control_Map", "0x00000003")+
		line("Victim_Mask", strings.Repeat("00", 31)+"06")+line("Credit_Mask", strings.Repeat("00", 31)+"02")+
		line("Threshold", "0x0a")+line("Packet_Size", "64")+line("CS_Threshold", "0x0b")+
		line("CS_ReturnDelay", "0x000a")+line("Marking_Rate", "200"))

	check(&SwitchPortCongestionSettingElement{}, []byte{0xc5, 64, 0, 100},
		line("Valid", "1")+line("Control_Type", "1")+line("Threshold", "0x05")+line("Packet_Size", "64")+
			line("Cong_Parm_Marking_Rate", "100"))
	var spcs SwitchPortCongestionSetting
	b = make([]byte, SwitchPortCongestionSettingSize)
	copy(b[47*4:], []byte{0x85, 1, 0, 2})
	if err := spcs.Unmarshal(b); err != nil || spcs.Element[47] != (SwitchPortCongestionSettingElement{Valid: 1, Threshold: 5, PacketSize: 1, MarkingRate: 2}) {
		t.Errorf("SwitchPortCongestionSetting %+v %v", spcs.Element[47], err)
	}

	check(&CACongestionEntry{}, []byte{0, 10, 2, 3, 4, 0, 0, 0},
		line("CCTI_Timer", "10")+line("CCTI_Increase", "2")+line("Trigger_Threshold", "3")+line("CCTI_Min", "4"))
	b = make([]byte, CACongestionSettingSize)
	copy(b, []byte{0, 1, 0x80, 0})
	copy(b[4+15*8:], []byte{0, 7, 1, 1, 1, 0, 0, 0})
	var cas CACongestionSetting
	if err := cas.Unmarshal(b); err != nil || cas.PortControl != 1 || cas.ControlMap != 0x8000 ||
		cas.Entry[15] != (CACongestionEntry{CCTITimer: 7, CCTIIncrease: 1, TriggerThreshold: 1, CCTIMin: 1}) {
		t.Errorf("CACongestionSetting %+v %v", cas, err)
	}
	if got := Dotted(&cas, nil); !strings.HasPrefix(got, line("Port_Control", "0x0001")+line("Control_Map", "0x8000")+line("CCTI_Timer", "0")) {
		t.Errorf("CACongestionSetting Dotted:\n%s", got)
	}

	check(&CCTEntry{}, []byte{0x40, 0x05}, line("CCT_Shift", "1")+line("CCT_Multiplier", "5"))
	b = make([]byte, CongestionControlTableSize)
	copy(b, []byte{0, 127})
	copy(b[4+63*2:], []byte{0xff, 0xff})
	var cct CongestionControlTable
	if err := cct.Unmarshal(b); err != nil || cct.CCTILimit != 127 || cct.Entry[63] != (CCTEntry{Shift: 3, Multiplier: 0x3fff}) {
		t.Errorf("CongestionControlTable %+v %v", cct, err)
	}
	check(&Timestamp{}, []byte{0, 0, 1, 0}, line("Timestamp", "256"))

	var h CCHeader
	m := NewRequest(ClassCongest, 2, MethodGet, AttrTimestamp, 0)
	copy(m[24:], []byte{0, 0, 0, 0, 0, 0, 0x12, 0x34})
	if err := h.Unmarshal(m); err != nil || h.CCKey != 0x1234 || h.Common.MgmtClass != MgmtClassCC || h.Common.AttributeID != AttrTimestamp {
		t.Errorf("CCHeader %+v %v", h, err)
	}
	if d := LookupAttr(ClassCongest, AttrClassPortInfo); d != descClassPortInfo {
		t.Errorf("CC ClassPortInfo: %v", d)
	}
	if AttrDataOffset(ClassCongest, AttrCongestionLog) != 32 || AttrDataOffset(ClassCongest, AttrTimestamp) != 64 ||
		AttrDataOffset(ClassSubnAdm, AttrPathRecord) != 56 {
		t.Error("AttrDataOffset")
	}
}
