package main

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ibtool/ibtool/internal/topogen"
)

func runArgs(args ...string) (stdout, stderr string, err error) {
	var out, errOut bytes.Buffer
	err = run(args, &out, &errOut)
	return out.String(), errOut.String(), err
}

func TestPresetAndFlags(t *testing.T) {
	want, err := topogen.Preset("S50")
	if err != nil {
		t.Fatal(err)
	}
	out, stderr, err := runArgs("-preset", "S50")
	if err != nil || out != string(want.Bytes()) {
		t.Errorf("-preset S50: %v, %d bytes, want the preset's %d", err, len(out), len(want.Bytes()))
	}
	if stderr != "ibtopogen: 6 switches, 44 CAs, 60 links; ibsim flags: (none)\n" {
		t.Errorf("stderr %q", stderr)
	}
	if out, _, err := runArgs("-preset", "S10000", "-ibsim-flags"); err != nil || out != "-N 16384 -S 2048 -P 65536\n" {
		t.Errorf("-ibsim-flags: %q, %v", out, err)
	}
	// A flag beside a preset changes only its own field.
	out, _, err = runArgs("-preset", "S50", "-hosts", "10", "-speed", "HDR")
	if err != nil || strings.Count(out, "\nCa\t") != 40 || strings.Count(out, "lid 0 4xHDR") != 2*(40+16) || !strings.Contains(out, `"spine02"`) {
		t.Errorf("-preset S50 -hosts 10 -speed HDR: %v\n%s", err, out)
	}
}

func TestShapesAndLinkOptions(t *testing.T) {
	file := filepath.Join(t.TempDir(), "f.net")
	_, _, err := runArgs("fattree2", "-leaves", "2", "-spines", "1", "-hosts", "2", "-dual-rail",
		"-link", "leaf01[5] w=1", "-link", "node0001[2] s=1", "-o", file)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"Ca\t2 \"node0001\"",
		"[5]\t\"spine01\"[1]\tw=1 s=7 e=3\t# \"spine01\"",
		"[2]\t\"leaf02\"[3]\tw=3 s=1 e=3\t# \"leaf02\"",
	} {
		if !strings.Contains(string(data), want) {
			t.Errorf("no %q in\n%s", want, data)
		}
	}
	out, _, err := runArgs("mesh", "-rows", "2", "-cols", "3", "-torus", "-hosts", "1", "-drop-links", "1", "-seed", "4")
	if err != nil || !strings.Contains(out, "mesh rows=2 cols=3 links=1 torus drop-links=1 extra-links=0 hosts=1") || !strings.Contains(out, "seed=4") {
		t.Errorf("mesh: %v\n%s", err, out)
	}
}

func TestBadCommandLines(t *testing.T) {
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{nil, "give -preset NAME or a shape"},
		{[]string{"-preset", "S7"}, `no preset "S7"`},
		{[]string{"mesh", "-preset", "S50"}, "give one"},
		{[]string{"-preset", "S50", "mesh"}, `unexpected "mesh"`},
		{[]string{"ring"}, `kind "ring"`},
		{[]string{"-preset", "S50", "-link", "leaf09[1] w=1"}, `-link: leaf09[1]: no node "leaf09"`},
		{[]string{"-preset", "S50", "-link", "leaf01[1] q=1"}, "ibsim knows w=, s= and e="},
		{[]string{"-preset", "S50", "-hosts", "x"}, `invalid value "x"`},
		{[]string{"-bogus"}, "flag provided but not defined: -bogus"},
		{[]string{"-preset", "S50", "-switch-guid", "0"}, "want a non-zero number"},
		{[]string{"fattree2", "-leaves", "2", "-spines", "2", "-hosts", "40"}, "a leaf needs 42 ports"},
	} {
		// One line, which main prints: no usage text, no half a file.
		out, stderr, err := runArgs(tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.msg) || strings.Contains(err.Error(), "\n") || out != "" || stderr != "" {
			t.Errorf("%q: %v (stdout %d bytes, stderr %q), want %q", tc.args, err, len(out), stderr, tc.msg)
		}
	}
	// -h is not an error: the usage, on stderr.
	if _, stderr, err := runArgs("-h"); !errors.Is(err, flag.ErrHelp) || !strings.Contains(stderr, "-preset string") {
		t.Errorf("-h: %v, %q", err, stderr)
	}
}
