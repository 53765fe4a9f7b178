package specgen

import (
	"strings"
	"testing"
)

func TestSnakeCase(t *testing.T) {
	for in, want := range map[string]string{
		"NodeGUID": "node_guid", "SystemImageGUID": "system_image_guid", "PKeyViolations": "p_key_violations",
		"VL15Dropped": "vl15_dropped", "QP1Dropped": "qp1_dropped", "LMC": "lmc", "HOQLife": "hoq_life",
		"LinkSpeedExtActive2": "link_speed_ext_active2", "GUIDCap": "guid_cap", "MKey": "m_key",
	} {
		if got := SnakeCase(in); got != want {
			t.Errorf("SnakeCase(%s) = %s, want %s", in, got, want)
		}
	}
}

const good = `
# Doc line.
enum Color unknown="?(%d)"
    1  Red   "red"   # warm
    2  Blue  "blue"
end

# A thing.
struct Thing size=8 class=smp attr=0x0100 methods=Get
    A         0   4   dec         LabelA
    reserved  4   4
    C         8   8   enum:Color  LabelC
    D         16  4   hex         D%d  count=4  stride=4
    G         32  8   mask:Color  -  cm=3  group=X  key  json=gee
end

struct Rec size=12 class=sa attr=0x0011 methods=Get
    E  0   8   dec           -  cm=4..5  count=2
    F  16  64  struct:Thing  -
    S  80  16  hex           -  cm=0,1
end

`

func TestParseAndGenerate(t *testing.T) {
	s, err := Parse("t.spec", good)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Enums) != 1 || s.Enums[0].Type != "uint8" || s.Enums[0].Doc[0] != "Doc line." ||
		s.Enums[0].Values[0].Comment != "warm" {
		t.Errorf("enum: %+v", s.Enums[0])
	}
	th := s.Structs[0]
	g := th.Fields[4]
	if th.AttrID != 0x100 || len(th.Fields) != 5 || th.Fields[1].Name != "" ||
		len(g.CompMask) != 1 || g.CompMask[0] != 3 || g.Group != "X" || !g.Key || g.JSON != "gee" || g.Label != "" ||
		th.Fields[3].Count != 4 || th.Fields[3].Stride != 4 || th.Fields[0].IBMAD != "uint" {
		t.Errorf("struct: %+v", th)
	}
	src, err := Generate(s)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"type Thing struct", "D [4]uint8", "C Color", "G uint8",
		"putBits(b, 16+i*4, 4, uint64(x.D[i]))", "x.C = Color(b[1])", "const AttrThing uint16 = 0x0100",
		`Key: true, CompMask: 0x8}`, `CompMask: 0x30, CompMaskEach: true}`, `CompMask: 0x3}`} {
		if !strings.Contains(string(src), want) {
			t.Errorf("generated code lacks %q", want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, c := range []struct{ spec, err string }{
		{"struct S size=2\n A 0 8 dec A\n B 4 8 dec B\nend", "bit 4 is also in A"},
		{"struct S size=2\n A 8 16 dec A\nend", "run past"},
		{"struct S size=2\n A 0 8 enum:Nope A\nend", "no enum Nope"},
		{"struct S size=2\n A 0 8 wat A\nend", "unknown hint"},
		{"struct S size=2\n A 0 8 dec A ibmad=nope\nend", "unknown libibmad formatter"},
		{"struct S size=2\n A 0 8 dec A colour=red\nend", "unknown field option"},
		{"struct S size=2\n A 0 8 dec\nend", "want NAME OFFSET WIDTH"},
		{"struct S size=2\n A 0 8 guid A\nend", "guid is 64 bits"},
		{"struct S size=2\n A 0 8 dec A\n", "missing end"},
		{"struct S\nend", "size"},
		{"struct S size=2 attr=1\nend", "class and attr together"},
		{"enum E\n 1 A \"a\"\n 1 B \"b\"\nend", "listed twice"},
		{"enum E type=uint8\n 256 A \"a\"\nend", "too small"},
		{"enum E\n 1 A \"a\nend", "unterminated"},
		{"struct S size=16\n A 4 96 bytes A\nend", "byte aligned"},
		{"struct S size=2\n A 0 4 dec A count=2 stride=2\nend", "stride 2 is less than width 4"},
		{"bogus", "expected enum or struct"},
		{"struct S size=2\n A 0 8 dec A cm=64\nend", "bad cm"},
		{"struct S size=2\n A 0 8 dec A cm=3..1\nend", "bad cm"},
		{"struct S size=2\n A 0 8 dec A count=2 cm=1..3\nend", "3 bits for 2 elements"},
		{"struct T size=1\n A 0 8 dec A cm=2\nend\nstruct S size=2 class=sa attr=1\n T 0 8 struct:T -\n B 8 8 dec B cm=2\nend",
			"bit 2 of B is also T.A"},
	} {
		_, err := Parse("t.spec", c.spec)
		if err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%q: error %v, want %q", c.spec, err, c.err)
		}
	}
}
