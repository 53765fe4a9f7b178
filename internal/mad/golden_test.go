package mad

import (
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// The captures in testdata/capture were recorded by testdata/capture.sh
// from infiniband-diags 44 (smpquery, perfquery, sminfo) running against
// ibsim with OpenSM: NAME.txt is the tool's output, NAME.mad every reply
// MAD it decoded. These tests decode the same MADs and print them with
// this package; the output must match the C tools byte for byte.

type capture struct {
	name string
	cmd  string
	text string
	mads [][]byte // padded to Size
	lens []int    // bytes captured of each MAD (SA replies can be short)
}

func loadCapture(t testing.TB, name string) *capture {
	t.Helper()
	c, err := readCapture(filepath.Join("testdata", "capture", name))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func readCapture(base string) (*capture, error) {
	cmd, err := os.ReadFile(base + ".cmd")
	if err != nil {
		return nil, err
	}
	text, err := os.ReadFile(base + ".txt")
	if err != nil {
		return nil, err
	}
	raw, err := os.ReadFile(base + ".mad")
	if err != nil {
		return nil, err
	}
	c := &capture{name: filepath.Base(base), cmd: strings.TrimSpace(string(cmd)), text: string(text)}
	for _, block := range strings.Split(string(raw), "--\n") {
		mad, err := hex.DecodeString(strings.Join(strings.Fields(block), ""))
		if err != nil || len(mad) > Size || len(mad) < 24 ||
			len(mad) != Size && Header(mad).Class() != ClassSubnAdm {
			return nil, fmt.Errorf("%s.mad: a block is not a %d-byte MAD (nor a shorter SA reply): %v", base, Size, err)
		}
		c.lens = append(c.lens, len(mad))
		c.mads = append(c.mads, append(mad, make([]byte, Size-len(mad))...))
	}
	return c, nil
}

// decodeMAD decodes the attribute a reply MAD carries (the first record of
// an SA GetTable response). Its data starts at DataOffset: byte 64 in
// SMPs and most GMPs (IBA 14.2.1.1, 13.4.3), 56 in SA MADs (15.2.1.1).
func decodeMAD(t testing.TB, mad []byte) Struct {
	t.Helper()
	recs := decodeRecords(t, mad, Size)
	if len(recs) == 0 {
		t.Fatalf("SA reply without a complete record: %x", mad[:64])
	}
	return recs[0]
}

// decodeRecords decodes every complete attribute of a reply MAD of which
// n bytes were received: one, or the records of an SA GetTable response
// (AttributeOffset 8-byte words apart). Under ibsim, which has no RMPP, a
// table is cut after the first 200 bytes of records.
func decodeRecords(t testing.TB, mad []byte, n int) []Struct {
	t.Helper()
	h := Header(mad)
	d := LookupAttr(h.Class(), h.AttrID())
	if d == nil {
		t.Fatalf("no structure for class %#x attribute %#x", h.Class(), h.AttrID())
	}
	off := AttrDataOffset(h.Class(), h.AttrID())
	stride := Size
	if h.Class() == ClassSubnAdm && h.Method() == MethodGetTblResp {
		var sh SAHeader
		if err := sh.Unmarshal(mad); err != nil {
			t.Fatal(err)
		}
		stride = int(sh.AttributeOffset) * 8
		if stride == 0 {
			return nil // no records (IBA 15.2.1.1)
		}
		if stride < d.Size {
			t.Fatalf("%s records %d bytes apart", d.Name, stride)
		}
	}
	var out []Struct
	for ; off+d.Size <= min(n, Size); off += stride {
		s := d.New()
		if err := s.Unmarshal(mad[off:]); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

// madsOf returns the decoded attributes (records) of c with attribute ID
// id.
func (c *capture) madsOf(t testing.TB, id uint16) []Struct {
	var out []Struct
	for i, m := range c.mads {
		if Header(m).AttrID() == id {
			out = append(out, decodeRecords(t, m, c.lens[i])...)
		}
	}
	if len(out) == 0 {
		t.Fatalf("%s: no MAD with attribute %#x", c.name, id)
	}
	return out
}

// body is the tool's output without its "# ..." title line.
func (c *capture) body() string {
	_, rest, _ := strings.Cut(c.text, "\n")
	return rest
}

func captureNames(t testing.TB, pattern string) []string {
	names, err := filepath.Glob(filepath.Join("testdata", "capture", pattern+".cmd"))
	if err != nil || len(names) == 0 {
		t.Fatalf("no captures %s: %v", pattern, err)
	}
	for i, n := range names {
		names[i] = strings.TrimSuffix(filepath.Base(n), ".cmd")
	}
	return names
}

var seedOnce sync.Once

// The fuzz targets start from every captured attribute.
func init() {
	seedOnce.Do(func() {
		names, _ := filepath.Glob(filepath.Join("testdata", "capture", "*.cmd"))
		for _, n := range names {
			c, err := readCapture(strings.TrimSuffix(n, ".cmd"))
			if err != nil {
				continue
			}
			for _, m := range c.mads {
				h := Header(m)
				if d := LookupAttr(h.Class(), h.AttrID()); d != nil {
					off := AttrDataOffset(h.Class(), h.AttrID())
					captureSeeds[d.Name] = append(captureSeeds[d.Name], m[off:off+d.Size])
				}
				if h.Class() == ClassSubnAdm {
					captureSeeds["SAHeader"] = append(captureSeeds["SAHeader"], m[:SAHeaderSize])
				}
			}
		}
	})
}

func diffText(t *testing.T, name, got, want string) {
	t.Helper()
	if got == want {
		return
	}
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < max(len(g), len(w)); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			t.Errorf("%s: line %d differs\n got: %q\nwant: %q", name, i+1, gl, wl)
			return
		}
	}
}

// smpquery nodeinfo, portinfo, switchinfo, mlnxextportinfo print one
// attribute with Dotted after a title line.
func TestGoldenSMPQueryDotted(t *testing.T) {
	var names []string
	for _, p := range []string{"*_nodeinfo_*", "*_portinfo_*", "*_switchinfo*", "*_mlnxext"} {
		names = append(names, captureNames(t, p)...)
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			c := loadCapture(t, name)
			s := decodeMAD(t, c.mads[len(c.mads)-1])
			opts := &DottedOptions{ShowKeys: strings.Contains(c.cmd, " -K ")}
			diffText(t, name, Dotted(s, opts), c.body())
		})
	}
}

// perfquery prints PortCounters, perfquery -x PortCountersExtended with the
// groups the PerfMgt ClassPortInfo capability masks allow.
func TestGoldenPerfQuery(t *testing.T) {
	for _, name := range captureNames(t, "*_perfquery_*") {
		t.Run(name, func(t *testing.T) {
			c := loadCapture(t, name)
			if f := strings.Fields(c.cmd); len(f) > 1 && strings.HasPrefix(f[1], "-") && f[1] != "-x" {
				t.Skip("not PortCounters: TestGoldenPerfQueryDetails")
			}
			cpi := c.madsOf(t, AttrClassPortInfo)[0].(*ClassPortInfo)
			var opts DottedOptions
			var counters Struct
			title := fmt.Sprintf("(CapMask: 0x%02X)", cpi.CapabilityMask)
			if strings.Contains(c.cmd, " -x ") {
				counters = c.madsOf(t, AttrPortCountersExtended)[0]
				if cpi.CapabilityMask&uint16(PerfCapMaskExtWidth) != 0 {
					opts.Groups = append(opts.Groups, "ExtWidth")
				}
				if cpi.CapabilityMask2&uint32(PerfCapMask2AddlPortCountersExt) != 0 {
					opts.Groups = append(opts.Groups, "AdditionalCounters")
				}
				title = fmt.Sprintf("(CapMask: 0x%02X CapMask2: 0x%07X)", cpi.CapabilityMask, cpi.CapabilityMask2)
			} else {
				counters = c.madsOf(t, AttrPortCounters)[0]
			}
			if first, _, _ := strings.Cut(c.text, "\n"); !strings.HasSuffix(first, title) {
				t.Errorf("title %q does not end in %q", first, title)
			}
			diffText(t, name, Dotted(counters, &opts), c.body())
		})
	}
}

// smpquery nodedesc: "Node Description:" and dots up to column 33.
func TestGoldenNodeDesc(t *testing.T) {
	for _, name := range captureNames(t, "*_nodedesc_*") {
		c := loadCapture(t, name)
		nd := c.madsOf(t, AttrNodeDescription)[0].(*NodeDescription)
		desc := nd.String()
		dots := "."
		if len(desc) < 32 {
			dots = strings.Repeat(".", 32-len(desc))
		}
		diffText(t, name, "Node Description:"+dots+desc+"\n", c.text)
	}
}

// smpquery sl2vl prints FormatSLtoVL for each input port.
func TestGoldenSL2VL(t *testing.T) {
	c := loadCapture(t, "tiny_sl2vl")
	want := strings.SplitAfterN(c.text, "\n", 3)[2]
	var got strings.Builder
	for i, s := range c.madsOf(t, AttrSLtoVLMappingTable) {
		fmt.Fprintf(&got, "ports: in %2d, out %2d: %s", i, 0, FormatSLtoVL(s.(*SLtoVLMappingTable)))
	}
	diffText(t, c.name, got.String(), want)
}

// smpquery vlarb prints FormatVLArbitration of the low and high tables.
func TestGoldenVLArb(t *testing.T) {
	for _, name := range captureNames(t, "*_vlarb") {
		c := loadCapture(t, name)
		pi := c.madsOf(t, AttrPortInfo)[0].(*PortInfo)
		tables := c.madsOf(t, AttrVLArbitrationTable)
		got := fmt.Sprintf("# Low priority VL Arbitration Table:%s# High priority VL Arbitration Table:%s",
			FormatVLArbitration(tables[0].(*VLArbitrationTable), int(pi.VLArbitrationLowCap)),
			FormatVLArbitration(tables[1].(*VLArbitrationTable), int(pi.VLArbitrationHighCap)))
		diffText(t, name, got, c.body())
	}
}

// smpquery pkeys and guidinfo print the decoded tables with printf.
func TestGoldenPKeysGUIDs(t *testing.T) {
	c := loadCapture(t, "tiny_pkeys")
	ni := c.madsOf(t, AttrNodeInfo)[0].(*NodeInfo)
	var got strings.Builder
	for i, s := range c.madsOf(t, AttrPKeyTable) {
		p := s.(*PKeyTable).PKey
		for j := 0; j < 32; j += 8 {
			fmt.Fprintf(&got, "%4d: 0x%04x 0x%04x 0x%04x 0x%04x 0x%04x 0x%04x 0x%04x 0x%04x\n",
				i*32+j, p[j], p[j+1], p[j+2], p[j+3], p[j+4], p[j+5], p[j+6], p[j+7])
		}
	}
	fmt.Fprintf(&got, "%d pkeys capacity for this port\n", ni.PartitionCap)
	diffText(t, c.name, got.String(), c.text)

	c = loadCapture(t, "tiny_guidinfo")
	pi := c.madsOf(t, AttrPortInfo)[0].(*PortInfo)
	got.Reset()
	for i, s := range c.madsOf(t, AttrGUIDInfo) {
		g := s.(*GUIDInfo).GUID
		for j := 0; j < 8; j += 2 {
			fmt.Fprintf(&got, "%4d: %s %s\n", i*8+j, g[j], g[j+1])
		}
	}
	fmt.Fprintf(&got, "%d guids capacity for this port\n", pi.GUIDCap)
	diffText(t, c.name, got.String(), c.text)
}

// sminfo prints SMInfo's fields in its own line.
func TestGoldenSMInfo(t *testing.T) {
	c := loadCapture(t, "tiny_sminfo")
	si := c.madsOf(t, AttrSMInfo)[0].(*SMInfo)
	got := fmt.Sprintf("sminfo: sm lid %d sm guid %#x, activity count %d priority %d state %d %s\n",
		1, uint64(si.GUID), si.ActCount, si.Priority, si.SMState, si.SMState)
	diffText(t, c.name, got, c.text)
}

// saValidBytes is how much of an SA reply from OpenSM through umad2sim
// and ibsim holds what OpenSM sent: bytes 232..255 of the captured SA
// replies are left-over memory (so are the unused bytes of SMP replies;
// PerfMgt replies are whole). It matters for GetTable replies, whose
// records fill the MAD: saquery decodes and prints the records there too
// (garbage LIDs), so only the records before byte 232 are real.
const saValidBytes = 232

// Every captured attribute re-encodes to its captured bytes (reserved bits
// aside), and the captured reserved bits are zero: a field missing from
// the description would show up as set reserved bits.
func TestGoldenBytes(t *testing.T) {
	seen := map[string]bool{}
	for _, name := range captureNames(t, "*") {
		c := loadCapture(t, name)
		for i, m := range c.mads {
			off, stride := AttrDataOffset(Header(m).Class(), Header(m).AttrID()), 0
			if Header(m).Class() == ClassSubnAdm {
				var sh SAHeader
				if err := sh.Unmarshal(m); err != nil {
					t.Fatal(err)
				}
				if got := Encode(&sh); string(got) != string(m[:SAHeaderSize]) {
					t.Errorf("%s MAD %d: SAHeader differs\n got %x\nwant %x", name, i, got, m[:SAHeaderSize])
				}
				stride = int(sh.AttributeOffset) * 8
			}
			n := c.lens[i]
			if Header(m).Class() == ClassSubnAdm {
				n = min(n, saValidBytes)
			}
			for j, s := range decodeRecords(t, m, n) {
				d := s.Desc()
				seen[d.Name] = true
				at := off + j*stride
				captured := m[at : at+d.Size]
				if got := Encode(s); string(got) != string(captured) {
					t.Errorf("%s MAD %d record %d (%s): Marshal(Unmarshal(b)) differs\n got %x\nwant %x", name, i, j, d.Name, got, captured)
				}
			}
		}
	}
	for _, want := range []string{"NodeInfo", "NodeDescription", "PortInfo", "SwitchInfo", "GUIDInfo",
		"PKeyTable", "SLtoVLMappingTable", "VLArbitrationTable", "SMInfo", "MlnxExtPortInfo",
		"ClassPortInfo", "PortCounters", "PortCountersExtended",
		"NodeRecord", "PortInfoRecord", "SLtoVLMappingTableRecord", "SwitchInfoRecord",
		"LinearForwardingTableRecord", "SMInfoRecord", "LinkRecord", "GUIDInfoRecord",
		"PathRecord", "VLArbitrationTableRecord", "MCMemberRecord"} {
		if !seen[want] {
			t.Errorf("no capture of %s", want)
		}
	}
}
