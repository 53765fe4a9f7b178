package cli

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ibtool/ibtool/internal/cli/cmd/decodemad"
	"github.com/ibtool/ibtool/internal/cli/cmdutil"
	"github.com/ibtool/ibtool/internal/mad"
)

// dottedOf is the libibmad part of decode_mad -v's output, with the M_Key
// hidden as smpquery hides it without -K (decode_mad shows it: it is in
// the input anyway).
func dottedOf(out string) string {
	_, dotted, _ := strings.Cut(out, "as libibmad prints it:\n")
	return mkeyLine.ReplaceAllString(dotted, "${1}<not displayed>")
}

// The same MAD in every input form decodes the same.
func TestDecodeMADInputForms(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(decodeDir, "dr_nodeinfo.mad"))
	if err != nil {
		t.Fatal(err)
	}
	want := decodeRun(string(raw))
	if want.code != 0 {
		t.Fatalf("%+v", want)
	}
	b, _ := hex.DecodeString(strings.Join(strings.Fields(string(raw)), ""))
	var colons, oxs, escaped, octal strings.Builder
	for i, c := range b {
		if i > 0 {
			colons.WriteString(":")
			oxs.WriteString(", ")
		}
		fmt.Fprintf(&colons, "%02X", c)
		fmt.Fprintf(&oxs, "0x%x", c)
		fmt.Fprintf(&escaped, "\\x%02x", c)
		if c >= 0x20 && c < 0x7f && c != '\\' && c != '\'' {
			octal.WriteByte(c)
		} else {
			fmt.Fprintf(&octal, "\\%03o", c)
		}
	}
	for name, in := range map[string]string{
		"colons":       colons.String(),
		"0x and comma": oxs.String(),
		"one line":     hex.EncodeToString(b),
		"python \\x":   "'" + escaped.String() + "'\n",
		"python repr":  "'" + octal.String() + "'",
		"double quote": `"` + escaped.String() + `"`,
	} {
		if got := decodeRun(in); got != want {
			t.Errorf("%s: %+v\nwant %+v", name, got, want)
		}
	}
	// -o skips bytes; --umad a umad header.
	if got := decodeRun("dead beef "+string(raw), "-o", "4"); got != want {
		t.Errorf("-o 4: %+v", got)
	}
	if got := decodeRun(strings.Repeat("00", 64)+string(raw), "--umad"); got != want {
		t.Errorf("--umad: %+v", got)
	}
	// Several MADs, "--" between them, in order.
	two := decodeRun(string(raw) + "\n--\n" + string(raw))
	if two.code != 0 || two.stdout != want.stdout+"\n"+want.stdout {
		t.Errorf("two MADs: %+v", two)
	}
	// -vv shows the bytes it decodes.
	if r := decodeRun(string(raw), "-vv", "-o", "2"); !strings.HasPrefix(r.stdout, "input (254 bytes):\n0181 8000 0002") {
		t.Errorf("-vv: %q", r.stdout)
	}
}

func TestDecodeMADErrors(t *testing.T) {
	for _, tc := range []struct {
		in   string
		args []string
		code int
		msg  string
	}{
		{"", nil, cmdutil.ExitFailure, "no MAD in the input"},
		{"0101 0", nil, cmdutil.ExitFailure, "an odd number"},
		{"0101 zz", nil, cmdutil.ExitFailure, `"z" is no hex digit`},
		{"'\\x0'", nil, cmdutil.ExitFailure, `\x needs two hex digits`},
		{"'\\x01", nil, cmdutil.ExitFailure, "must end with the quote"},
		{"0101", nil, cmdutil.ExitFailure, "2 bytes are too few for a MAD"},
		{"0101", []string{"-o", "3"}, cmdutil.ExitFailure, "-o 3: the input has only 2 bytes"},
		{"0101", []string{"--umad"}, cmdutil.ExitFailure, "--umad: 2 bytes, but the umad header alone is 64"},
		{"0101", []string{"-l"}, cmdutil.ExitFailure, "-l: 2 bytes left at byte 0, too few for the LRH (8)"},
		{"0000 0000 0000 0000", []string{"-l"}, cmdutil.ExitFailure, "-l: the LRH's LNH is 0 (Raw): no InfiniBand transport header follows"},
		{"0101", []string{"-o", "-1"}, cmdutil.ExitUsage, "must not be negative"},
		{strings.Repeat("00", 256) + "\n--\nzz", nil, cmdutil.ExitFailure, "is no hex digit"},
		{strings.Repeat("00", 256) + "\n--\n00", nil, cmdutil.ExitFailure, "MAD 2: 1 bytes are too few"},
	} {
		r := decodeRun(tc.in, tc.args...)
		if r.code != tc.code || !strings.Contains(r.stderr, tc.msg) || r.stdout != "" {
			t.Errorf("%q %v: got %+v; want exit %d and %q", tc.in, tc.args, r, tc.code, tc.msg)
		}
	}
}

// Classes and shapes the captures do not cover: a vendor MAD with an
// OUI, a CC MAD, an unknown attribute, a short MAD, a DR SMP whose hop
// count is out of range.
func TestDecodeMADOtherClasses(t *testing.T) {
	m := mad.NewRequest(mad.ClassVendorOFA, 1, mad.MethodGet, 0x0001, 0)
	m[37], m[38], m[39] = 0x00, 0x14, 0x05
	copy(m[40:], "ping")
	r := decodeRun(hex.EncodeToString(m))
	if r.code != 0 || !strings.Contains(r.stdout, "Vendor2Header (IBA 16.5.1, 40 bytes) at byte 0\n") ||
		!strings.Contains(r.stdout, "  +0x24  00001405  OUI=0x1405\n") ||
		!strings.Contains(r.stdout, "data (no decoder for attribute 0x0001 of class 0x32) at byte 40:\n7069 6e67 0000") {
		t.Errorf("vendor MAD: %+v", r)
	}
	r = decodeRun(hex.EncodeToString(m), "--json")
	if !strings.Contains(r.stdout, `"vendor_oui": "0x001405"`) {
		t.Errorf("vendor MAD --json: %+v", r)
	}

	m = mad.NewRequest(mad.ClassCongest, 2, mad.MethodGet, mad.AttrTimestamp, 0)
	copy(m[24:], []byte{0, 0, 0, 0, 0, 0, 0x12, 0x34}) // CC_Key
	r = decodeRun(hex.EncodeToString(m), "--json")
	var got struct {
		MADs []struct {
			CCHeader map[string]any `json:"cc_header"`
			Name     string         `json:"attribute_text"`
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || len(got.MADs) != 1 || got.MADs[0].CCHeader["cc_key"] != "0x0000000000001234" ||
		got.MADs[0].Name != "Timestamp" {
		t.Errorf("CC MAD: %v %+v", err, r)
	}

	m = mad.NewLIDSMP(mad.MethodGet, 0x00ff, 0)
	r = decodeRun(hex.EncodeToString(m))
	if r.code != 0 || !strings.Contains(r.stdout, "SubnGet(0x00ff)") || !strings.Contains(r.stdout, "at byte 64:\n  all zero\n") {
		t.Errorf("unknown attribute: %+v", r)
	}

	m = mad.NewDRSMP(mad.MethodGet, mad.AttrNodeInfo, 0, []byte{0, 1})
	m[7] = 200 // hop count
	if r = decodeRun(hex.EncodeToString(m)); r.code != 0 || !strings.Contains(r.stdout, "hop count 200 is more than 63: no paths") {
		t.Errorf("bad hop count: %+v", r)
	}
	if r = decodeRun(hex.EncodeToString(m[:40])); r.code != 0 || !strings.Contains(r.stdout, "(the MAD has 40 bytes: no room for the paths)") {
		t.Errorf("short DR SMP: %+v", r)
	}
}

// -l: a whole UD packet, LRH (and GRH) + BTH + DETH, then the MAD.
func TestDecodeMADLinkHeaders(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(decodeDir, "dr_nodeinfo.mad"))
	if err != nil {
		t.Fatal(err)
	}
	want := decodeRun(string(raw))
	madHex := strings.Join(strings.Fields(string(raw)), "")
	lrh := mad.LRH{VL: 15, LNH: mad.LNHLocal, DLID: 0xffff, PktLen: 74, SLID: 0xffff}
	bth := mad.BTH{OpCode: 0x64, PKey: 0xffff, DestQP: 0}
	deth := mad.DETH{QKey: 0, SrcQP: 0}
	packet := hex.EncodeToString(mad.Encode(&lrh)) + hex.EncodeToString(mad.Encode(&bth)) + hex.EncodeToString(mad.Encode(&deth)) + madHex
	if r := decodeRun(packet, "-l"); r != want {
		t.Errorf("-l: %+v\nwant %+v", r, want)
	}
	r := decodeRun(packet, "-l", "-v")
	for _, s := range []string{"LRH (IBA 7.7, 8 bytes) at byte 0\n", "LNH=2(IBA local (BTH)) DLID=65535", "BTH (IBA 9.2, 12 bytes) at byte 8\n",
		"OpCode=0x64", "DETH (IBA 9.3.2, 8 bytes) at byte 20\n"} {
		if !strings.Contains(r.stdout, s) {
			t.Errorf("-l -v: no %q in\n%s", s, r.stdout)
		}
	}
	// With a GRH, and SEND Only with Immediate's 4 bytes.
	lrh.LNH = mad.LNHGlobal
	grh := mad.GRH{IPVer: 6, PayLen: 276, NxtHdr: 0x1b, HopLmt: 1}
	bth.OpCode = 0x65
	packet = hex.EncodeToString(mad.Encode(&lrh)) + hex.EncodeToString(mad.Encode(&grh)) + hex.EncodeToString(mad.Encode(&bth)) +
		hex.EncodeToString(mad.Encode(&deth)) + "12345678" + madHex
	if r := decodeRun(packet, "-l"); r != want {
		t.Errorf("-l with GRH: %+v", r)
	}
	r = decodeRun(packet, "-l", "--json")
	var got struct {
		MADs []struct{ GRH, BTH map[string]any }
	}
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || len(got.MADs) != 1 || got.MADs[0].GRH["nxt_hdr"] != 27.0 ||
		got.MADs[0].BTH["op_code"] != 101.0 {
		t.Errorf("-l --json: %v %+v", err, r)
	}
	// A packet cut inside its headers.
	if r := decodeRun(packet[:2*52], "-l"); r.code != cmdutil.ExitFailure || !strings.Contains(r.stderr, "too few for the BTH") {
		t.Errorf("short packet: %+v", r)
	}
}

func TestDecodeMADJSON(t *testing.T) {
	in, err := os.ReadFile(filepath.Join(decodeDir, "sa_pathrecord.req"))
	if err != nil {
		t.Fatal(err)
	}
	r := decodeRun(string(in), "--json")
	var got struct {
		MADs []struct {
			Summary   string
			SAHeader  map[string]any `json:"sa_header"`
			CompMask  []string       `json:"component_mask_fields"`
			Attribute map[string]any
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || len(got.MADs) != 1 {
		t.Fatalf("%v: %+v", err, r)
	}
	m := got.MADs[0]
	if m.Summary != "SubnAdmGetTable(PathRecord) status 0x0000 (success)" || m.SAHeader["component_mask"] != "0x0000000000000030" ||
		strings.Join(m.CompMask, " ") != "DLID SLID" || m.Attribute["dlid"] != 7.0 || m.Attribute["slid"] != 2.0 {
		t.Errorf("%+v", m)
	}

	in, _ = os.ReadFile(filepath.Join(decodeDir, "dr_nodeinfo.send"))
	r = decodeRun(string(in), "--json", "--umad")
	var dr struct {
		MADs []struct {
			UMAD map[string]any `json:"umad"`
			SMP  map[string]any `json:"smp"`
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &dr); err != nil || len(dr.MADs) != 1 || dr.MADs[0].UMAD["lid"] != 65535.0 ||
		dr.MADs[0].SMP["initial_path"] != "0,8,1" || dr.MADs[0].SMP["direction"] != 0.0 {
		t.Errorf("%v: %+v", err, r)
	}
}

func FuzzDecodeMAD(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(decodeDir, "*.mad"))
	for _, name := range files {
		in, _ := os.ReadFile(name)
		blobs, _ := decodemad.ParseMADText(string(in))
		for _, b := range blobs {
			f.Add(b, false)
		}
	}
	f.Add(make([]byte, 320), true)
	f.Fuzz(func(t *testing.T, b []byte, umad bool) {
		if d, err := decodemad.DecodeMADBytes(b, &decodemad.DecodeMADOptions{Verbose: 2, Umad: umad}); err == nil {
			d.Render(&strings.Builder{})
		}
		_, _ = decodemad.ParseMADText(string(b))
	})
}
