package nodename

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	m, _, err := Parse(strings.NewReader(`# a comment
   
0x0002c90300001490 "switch-a"
0x0002c90300001491	"host one"  # trailing comment
0x30 plain name # with comment
021 octal
16 decimal
0x0002c90300001490 "duplicate loses"
0x99
0x98 "#"
`))
	if err != nil {
		t.Fatal(err)
	}
	for guid, want := range map[uint64]string{
		0x0002c90300001490: "switch-a",
		0x0002c90300001491: "host one",
		0x30:               "plain name ", // strtok keeps the space before '#'
		021:                "octal",
		16:                 "decimal",
	} {
		if got, ok := m.Lookup(guid); !ok || got != want {
			t.Errorf("Lookup(%#x) = %q, %v; want %q", guid, got, ok, want)
		}
	}
	for _, guid := range []uint64{0x99, 0x98} {
		if got, ok := m.Lookup(guid); ok {
			t.Errorf("Lookup(%#x) = %q, want no name", guid, got)
		}
	}
}

// A line longer than fgets' 256-byte buffer is read in pieces, and the
// rest is parsed as a line of its own (and fails here).
func TestParseLongLineRestIsALineOfItsOwn(t *testing.T) {
	_, bad, err := Parse(strings.NewReader("0x97 \"" + strings.Repeat("x", 300) + "\"\n"))
	if err != ErrSyntax || !strings.HasPrefix(bad, "xxxx") {
		t.Fatalf("err = %v, bad = %q", err, bad)
	}
}

func TestParseBadLine(t *testing.T) {
	for _, line := range []string{"0x12z name", "name only", "0x", "12,13 x"} {
		_, bad, err := Parse(strings.NewReader("0x1 ok\n" + line + "\n"))
		if err != ErrSyntax || bad != line {
			t.Errorf("%q: err = %v, bad line %q", line, err, bad)
		}
	}
}

func TestOpenWarnsAndFallsBackToDescriptions(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "map")
	os.WriteFile(path, []byte("0x1 one\nbogus line\n"), 0o644)
	var warn bytes.Buffer
	m := Open(path, &warn)
	want := "WARNING failed to parse node name map \"" + path + "\"\nWARNING failed line: \"bogus line\"\n"
	if warn.String() != want {
		t.Fatalf("warning %q, want %q", warn.String(), want)
	}
	if got := m.Name(1, "desc\x01"); got != "desc " {
		t.Fatalf("Name = %q", got)
	}
	warn.Reset()
	Open(filepath.Join(dir, "missing"), &warn)
	if !strings.Contains(warn.String(), "WARNING failed to open node name map") || !strings.Contains(warn.String(), "(No such file or directory)") {
		t.Fatalf("missing explicit map: %q", warn.String())
	}
}

func TestCleanDesc(t *testing.T) {
	if got := CleanDesc("a\tb\x00junk"); got != "a b" {
		t.Fatalf("%q", got)
	}
	if got := CleanDesc(strings.Repeat("y", 70)); len(got) != 64 {
		t.Fatalf("len %d", len(got))
	}
	var nilMap *Map
	if got := nilMap.Name(5, "d"); got != "d" {
		t.Fatalf("nil map Name = %q", got)
	}
}

func FuzzParse(f *testing.F) {
	f.Add("0x1 \"a\"\n# c\n")
	f.Fuzz(func(t *testing.T, s string) {
		Parse(strings.NewReader(s))
	})
}
