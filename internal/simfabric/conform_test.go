package simfabric

import (
	"fmt"
	"strings"
	"testing"
)

// fakeTB records Compare's failures instead of failing the real test.
type fakeTB struct {
	testing.TB // nil: any method Compare should not call panics
	errors     []string
}

func (f *fakeTB) Helper() {}
func (f *fakeTB) Errorf(format string, args ...any) {
	f.errors = append(f.errors, fmt.Sprintf(format, args...))
}

const noise = "ibwarn: [4242] sim_connect: attached as client 3 at node \"Switch1\"\n"

func TestCompare(t *testing.T) {
	base := Result{Stdout: "# Node info: Lid 2\nBaseVers:....1\n", Stderr: noise}
	for _, tc := range []struct {
		name  string
		c, us Result
		fails bool // the C tool is expected to fail
		norms []Normalizer
		want  []string // substrings of the failure; none: no failure
	}{
		{name: "equal, noise only on one side", c: base, us: Result{Stdout: base.Stdout}},
		{name: "stdout", c: base, us: Result{Stdout: "# Node info: Lid 2\nBaseVers:....2\n"},
			want: []string{"label: ibtool differs", "--- C tool\n+++ ibtool\n@@ -1,2 +1,2 @@\n # Node info: Lid 2\n-BaseVers:....1\n+BaseVers:....2\n"}},
		{name: "exit code", c: Result{Code: 255}, us: Result{Code: 1}, fails: true, want: []string{"exit code: C tool 255, ibtool 1"}},
		{name: "expected failure", c: Result{Code: 255, Stdout: "x: iberror: failed: y\n"}, us: Result{Code: 255, Stdout: "x: iberror: failed: y\n"}, fails: true},
		{name: "C tool failed unexpectedly", c: Result{Code: 255}, us: Result{Code: 255},
			want: []string{"label: the test expects the C tool to succeed; it exited 255"}},
		{name: "C tool succeeded unexpectedly", c: base, us: base, fails: true,
			want: []string{"label: the test expects the C tool to fail; it exited 0"}},
		{name: "C tool could not run", c: Result{Code: -1, Stderr: "simfabric: cannot run x\n"}, us: Result{Code: -1}, fails: true,
			want: []string{"the test expects the C tool to fail; it exited -1", "cannot run x"}},
		{name: "stderr class", fails: true, c: Result{Code: 255, Stderr: noise + "ibwarn: [4242] mad_rpc: _do_madrpc failed; dport (Lid 9)\n"},
			us: Result{Code: 255, Stderr: noise}, want: []string{"stderr: C tool wrote \"ibwarn: [4242] mad_rpc"}},
		{name: "different error text is fine", fails: true, c: Result{Code: 255, Stderr: "smpquery: iberror: failed: x\n"},
			us: Result{Code: 255, Stderr: "smpquery: iberror: failed: y\n"}},
		{name: "timeout", c: base, us: Result{Stdout: base.Stdout, TimedOut: true}, want: []string{"timed out: C tool false, ibtool true"}},
		{name: "normalised", c: Result{Stdout: "# generated on Sun Nov 22 01:05:26 2026\n"},
			us: Result{Stdout: "# generated on Mon Nov 23 11:00:00 2026\n"}, norms: []Normalizer{Timestamps}},
		{name: "not normalised", c: Result{Stdout: "# generated on Sun Nov 22 01:05:26 2026\n"},
			us: Result{Stdout: "# generated on Mon Nov 23 11:00:00 2026\n"}, want: []string{"-# generated on Sun"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ft := &fakeTB{}
			if tc.fails {
				CompareFailure(ft, "label", tc.c, tc.us, tc.norms...)
				// The same through a helper that passes its t on.
				marked := &fakeTB{}
				Compare(ExpectFailure(marked), "label", tc.c, tc.us, tc.norms...)
				if fmt.Sprint(marked.errors) != fmt.Sprint(ft.errors) {
					t.Errorf("ExpectFailure: %q, CompareFailure: %q", marked.errors, ft.errors)
				}
			} else {
				Compare(ft, "label", tc.c, tc.us, tc.norms...)
			}
			if len(tc.want) == 0 {
				if len(ft.errors) != 0 {
					t.Errorf("unexpected failure: %s", ft.errors)
				}
				return
			}
			if len(ft.errors) != 1 {
				t.Fatalf("want one failure, got %q", ft.errors)
			}
			for _, w := range tc.want {
				if !strings.Contains(ft.errors[0], w) {
					t.Errorf("failure lacks %q:\n%s", w, ft.errors[0])
				}
			}
		})
	}
}

func TestUnifiedDiff(t *testing.T) {
	var a, b []string
	for i := 1; i <= 20; i++ {
		a = append(a, fmt.Sprint("line ", i))
		if i != 5 && i != 15 {
			b = append(b, fmt.Sprint("line ", i))
		}
		if i == 16 {
			b = append(b, "new")
		}
	}
	got := UnifiedDiff("a", "b", strings.Join(a, "\n")+"\n", strings.Join(b, "\n"))
	want := `--- a
+++ b
@@ -2,7 +2,6 @@
 line 2
 line 3
 line 4
-line 5
 line 6
 line 7
 line 8
@@ -12,9 +11,9 @@
 line 12
 line 13
 line 14
-line 15
 line 16
+new
 line 17
 line 18
 line 19
-line 20
+line 20  (no newline at end)
`
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	if d := UnifiedDiff("a", "b", "x\n", "x\n"); d != "" {
		t.Errorf("equal inputs: %q", d)
	}
	if d := UnifiedDiff("a", "b", "", "x\n"); d != "--- a\n+++ b\n@@ -0,0 +1,1 @@\n+x\n" {
		t.Errorf("from empty: %q", d)
	}
}

func TestNormalizers(t *testing.T) {
	for _, tc := range []struct {
		n        Normalizer
		in, want string
	}{
		{DropSimNoise, "a\n" + noise + "b\n", "a\nb\n"},
		{DropSimNoise, "ibwarn: [1] sim_init: connect failed\n", "ibwarn: [1] sim_init: connect failed\n"},
		{PIDs, "ibwarn: [4242] mad_rpc: x [pid 77]\n  1    1[  ] ==>\n", "ibwarn: [pid] mad_rpc: x [pid]\n  1    1[  ] ==>\n"},
		{Timestamps, "# Topology file: generated on Sun Nov  2 01:05:26 2026\n", "# Topology file: generated on <timestamp>\n"},
		{Timestamps, "at 2026-11-22T01:05:26.123Z and 2026-11-22 01:05:26+01:00, Nov 22 01:05:26 x", "at <timestamp> and <timestamp>, <timestamp> x"},
	} {
		if got := tc.n(tc.in); got != tc.want {
			t.Errorf("%q -> %q, want %q", tc.in, got, tc.want)
		}
	}
}
