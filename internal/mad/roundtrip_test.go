package mad

import (
	"math/rand"
	"reflect"
	"testing"
)

// Every structure round-trips: bytes -> Unmarshal -> Marshal gives the
// bytes back (reserved bits cleared), and Unmarshal(Marshal(x)) == x.
func TestRoundTripEveryStruct(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for _, d := range Structs() {
		t.Run(d.Name, func(t *testing.T) {
			for iter := 0; iter < 200; iter++ {
				b := make([]byte, d.Size)
				rng.Read(b)
				x := d.New()
				if err := x.Unmarshal(b); err != nil {
					t.Fatal(err)
				}
				enc := Encode(x)
				if want := maskReserved(d, b); string(enc) != string(want) {
					t.Fatalf("Marshal(Unmarshal(b)):\n got %x\nwant %x", enc, want)
				}
				y := d.New()
				if err := y.Unmarshal(enc); err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(x, y) {
					t.Fatalf("Unmarshal(Marshal(x)) != x:\n%+v\n%+v", x, y)
				}
			}
			if err := d.New().Unmarshal(make([]byte, d.Size-1)); err == nil {
				t.Error("short input accepted")
			}
			if err := d.New().Marshal(make([]byte, d.Size-1)); err == nil {
				t.Error("short output buffer accepted")
			}
		})
	}
}

// Marshal leaves reserved bits of its buffer alone.
func TestMarshalKeepsReservedBits(t *testing.T) {
	b := make([]byte, PortInfoSize)
	for i := range b {
		b[i] = 0xff
	}
	pi := &PortInfo{}
	if err := pi.Marshal(b); err != nil {
		t.Fatal(err)
	}
	// bits 274..276 are reserved (IBA 14.2.5.6): byte 34 = ProtectBits(2)
	// reserved(3) LMC(3).
	if got := b[34]; got != 0x38 {
		t.Errorf("byte 34 = %#x, want 0x38 (only the reserved bits set)", got)
	}
}

// Hand-made bytes with a distinct value in every 16-bit word pin down the
// offsets of the structures ibsim cannot produce.
func TestGoldenBytesByHand(t *testing.T) {
	words := make([]byte, 64)
	for i := 0; i < 32; i++ {
		words[2*i], words[2*i+1] = 0x11, byte(i)
	}
	var pie PortInfoExtended
	if err := pie.Unmarshal(words); err != nil {
		t.Fatal(err)
	}
	want := PortInfoExtended{
		CapabilityMask: 0x11001101, FECModeActive: 0x1102,
		FDRFECModeSupported: 0x1103, FDRFECModeEnabled: 0x1104,
		EDRFECModeSupported: 0x1105, EDRFECModeEnabled: 0x1106,
		HDRFECModeSupported: 0x1107, HDRFECModeEnabled: 0x1108,
		NDRFECModeSupported: 0x1109, NDRFECModeEnabled: 0x110a,
	}
	if pie != want {
		t.Errorf("PortInfoExtended:\n got %+v\nwant %+v", pie, want)
	}
	// libibmad prints HDR/NDR from bytes 12, 18, 16 and 22; bytes 22-23
	// are reserved, which a decoded structure holds as zero.
	wantDotted := `CapMask:.........................0x11001101
FECModeActive:...................4354
FDRFECModeSupported:.............0x1103
FDRFECModeEnabled:...............0x1104
EDRFECModeSupported:.............0x1105
EDRFECModeEnabled:...............0x1106
HDRFECModeSupported:.............0x1106
HDRFECModeEnabled:...............0x1109
NDRFECModeSupported:.............0x1108
NDRFECModeEnabled:...............0x0000
`
	if got := Dotted(&pie, nil); got != wantDotted {
		t.Errorf("Dotted:\n%s\nwant:\n%s", got, wantDotted)
	}

	var lft LinearForwardingTable
	seq := make([]byte, 64)
	for i := range seq {
		seq[i] = byte(i * 3)
	}
	if err := lft.Unmarshal(seq); err != nil {
		t.Fatal(err)
	}
	if lft.Port[0] != 0 || lft.Port[1] != 3 || lft.Port[63] != 189 {
		t.Errorf("LFT ports %v", lft.Port)
	}
	if got, want := Dotted(&lft, nil), "LinearForwTbl:..................."+
		"000306090c0f1215181b1e2124272a2d303336393c3f4245484b4e5154575a5d606366696c6f7275787b7e8184878a8d909396999c9fa2a5a8abaeb1b4b7babd\n"; got != want {
		t.Errorf("LFT Dotted:\n%q\nwant\n%q", got, want)
	}

	var sl SLtoVLMappingTable
	if err := sl.Unmarshal([]byte{0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xe7}); err != nil {
		t.Fatal(err)
	}
	if sl.VL[0] != 0 || sl.VL[1] != 1 || sl.VL[14] != 14 || sl.VL[15] != 7 {
		t.Errorf("SL2VL %v", sl.VL)
	}
	if got := Dotted(&sl, nil); got != "SLToVLMap:.......................0x0123456789abcde7\n" {
		t.Errorf("SL2VL Dotted %q", got)
	}

	mx := MlnxExtPortInfo{StateChangeEnable: 1, LinkSpeedSupported: 1, LinkSpeedEnabled: 1, LinkSpeedActive: 1}
	b := Encode(&mx)
	if b[3] != 1 || b[7] != 1 || b[11] != 1 || b[15] != 1 {
		t.Errorf("MlnxExtPortInfo bytes %x", b[:16])
	}
}
