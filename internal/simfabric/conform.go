package simfabric

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// Normalizer rewrites a tool's output before comparison, for the parts that
// legitimately differ between runs (timestamps, process ids).
type Normalizer func(string) string

// Compare fails t when ibtool's result (ours) differs from the C tool's (c):
// stdout after the normalizers (shown as a unified diff, C tool = "-",
// ibtool = "+"), the exit code, or the stderr class (whether anything was
// written to stderr, ignoring the simulator's noise). A run that timed out
// also fails, and so does a C tool that did not succeed: matching a
// reference that failed (a fabric not up, a tool missing a library) proves
// nothing, so a case that expects the C tool to fail uses CompareFailure.
func Compare(t testing.TB, label string, c, ours Result, norms ...Normalizer) {
	t.Helper()
	_, fails := t.(failing)
	compare(t, label, fails, c, ours, norms)
}

// ExpectFailure marks t for Compare: the case expects the C tool to fail,
// as CompareFailure does. It is for the tests' own comparison helpers,
// which pass their t on to Compare.
func ExpectFailure(t testing.TB) testing.TB { return failing{t} }

type failing struct{ testing.TB }

// CompareFailure is Compare for a case where the C tool is expected to
// fail (exit non-zero, usage errors included): it fails t when the C tool
// succeeds, or did not run to its end (Code -1). ibtool must still fail
// the same way.
func CompareFailure(t testing.TB, label string, c, ours Result, norms ...Normalizer) {
	t.Helper()
	compare(t, label, true, c, ours, norms)
}

func compare(t testing.TB, label string, fails bool, c, ours Result, norms []Normalizer) {
	t.Helper()
	// A timeout is Diff's to report; -1 is a tool killed or never started.
	asExpected := c.TimedOut || c.Code != -1 && (c.Code != 0) == fails
	if !asExpected {
		want := "succeed"
		if fails {
			want = "fail"
		}
		t.Errorf("%s: the test expects the C tool to %s; it exited %d:\n%s", label, want, c.Code, c)
		return
	}
	if d := Diff(c, ours, norms...); d != "" {
		t.Errorf("%s: ibtool differs from the C tool:\n%s", label, d)
	}
}

// Diff describes the differences Compare reports, or returns "".
func Diff(c, ours Result, norms ...Normalizer) string {
	var b strings.Builder
	if c.TimedOut || ours.TimedOut {
		fmt.Fprintf(&b, "timed out: C tool %v, ibtool %v\n", c.TimedOut, ours.TimedOut)
	}
	if c.Code != ours.Code {
		fmt.Fprintf(&b, "exit code: C tool %d, ibtool %d\n", c.Code, ours.Code)
	}
	cErr, oErr := strings.TrimSpace(DropSimNoise(c.Stderr)), strings.TrimSpace(DropSimNoise(ours.Stderr))
	if (cErr == "") != (oErr == "") {
		fmt.Fprintf(&b, "stderr: C tool wrote %q, ibtool wrote %q\n", cErr, oErr)
	}
	cOut, oOut := c.Stdout, ours.Stdout
	for _, n := range norms {
		cOut, oOut = n(cOut), n(oOut)
	}
	if cOut != oOut {
		b.WriteString("stdout:\n")
		b.WriteString(UnifiedDiff("C tool", "ibtool", cOut, oOut))
	}
	return b.String()
}

var simNoiseRE = regexp.MustCompile(`(?m)^ibwarn: \[\d+\] sim_connect: attached as client \d+ at node .*(\n|$)`)

// DropSimNoise removes the line umad2sim prints for every client that
// attaches to ibsim (`ibwarn: [pid] sim_connect: attached as client ...`).
func DropSimNoise(s string) string { return simNoiseRE.ReplaceAllString(s, "") }

var (
	pidPrefixRE = regexp.MustCompile(`(?m)^(\w+): \[\d+\]`) // ibwarn: [1234] func: ...
	pidTagRE    = regexp.MustCompile(`\[pid \d+\]`)
)

// PIDs replaces process ids in libibumad/libibmad message prefixes
// (`ibwarn: [1234]`) and `[pid 1234]` tags with `[pid]`.
func PIDs(s string) string {
	s = pidPrefixRE.ReplaceAllString(s, "$1: [pid]")
	return pidTagRE.ReplaceAllString(s, "[pid]")
}

var timestampREs = []*regexp.Regexp{
	// ctime: "Sun Nov 22 01:05:26 2026"
	regexp.MustCompile(`\b(Mon|Tue|Wed|Thu|Fri|Sat|Sun) (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) [ \d]\d \d\d:\d\d:\d\d \d{4}\b`),
	// ISO 8601 / RFC 3339, with optional fraction and zone
	regexp.MustCompile(`\b\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:?\d\d)?`),
	// syslog: "Nov 22 01:05:26"
	regexp.MustCompile(`\b(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) [ \d]\d \d\d:\d\d:\d\d\b`),
}

// Timestamps replaces dates and times (ctime, ISO 8601, syslog formats)
// with `<timestamp>`.
func Timestamps(s string) string {
	for _, re := range timestampREs {
		s = re.ReplaceAllString(s, "<timestamp>")
	}
	return s
}

// diffContext is the number of unchanged lines shown around a change.
const diffContext = 3

// UnifiedDiff renders the line differences between a and b in unified
// format ("" when they are equal). It is meant for test failures: outputs
// of many thousands of differing lines are shown as one replaced block.
func UnifiedDiff(nameA, nameB, a, b string) string {
	if a == b {
		return ""
	}
	la, lb := splitLines(a), splitLines(b)
	ops := diffLines(la, lb)
	var out strings.Builder
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", nameA, nameB)
	// Group the edit script into hunks: runs of changes joined when fewer
	// than 2*diffContext equal lines separate them.
	for i := 0; i < len(ops); {
		if ops[i].kind == ' ' {
			i++
			continue
		}
		start := max(i-diffContext, 0)
		end := i
		for end < len(ops) {
			if ops[end].kind != ' ' {
				end++
				continue
			}
			run := end
			for run < len(ops) && ops[run].kind == ' ' {
				run++
			}
			if run == len(ops) || run-end > 2*diffContext {
				break
			}
			end = run
		}
		stop := min(end+diffContext, len(ops))
		writeHunk(&out, ops[start:stop])
		i = stop
	}
	return out.String()
}

type diffOp struct {
	kind   byte // ' ', '-', '+'
	text   string
	ai, bi int // line index in a and b (of the next line, for inserts/deletes)
}

func writeHunk(out *strings.Builder, ops []diffOp) {
	var na, nb int
	for _, op := range ops {
		if op.kind != '+' {
			na++
		}
		if op.kind != '-' {
			nb++
		}
	}
	startA, startB := ops[0].ai+1, ops[0].bi+1
	if na == 0 {
		startA--
	}
	if nb == 0 {
		startB--
	}
	fmt.Fprintf(out, "@@ -%d,%d +%d,%d @@\n", startA, na, startB, nb)
	for _, op := range ops {
		out.WriteByte(op.kind)
		out.WriteString(op.text)
		out.WriteByte('\n')
	}
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	for i, l := range lines {
		if strings.HasSuffix(l, "\n") {
			lines[i] = l[:len(l)-1]
		} else {
			lines[i] = l + "  (no newline at end)"
		}
	}
	return lines
}

// maxDiffCells bounds the LCS table; beyond it the differing middle is
// shown as one replaced block.
const maxDiffCells = 4 << 20

// diffLines computes an edit script from a to b: common prefix and suffix,
// and a longest-common-subsequence alignment of the middle.
func diffLines(a, b []string) []diffOp {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	var ops []diffOp
	for i := 0; i < pre; i++ {
		ops = append(ops, diffOp{' ', a[i], i, i})
	}
	ma, mb := a[pre:len(a)-suf], b[pre:len(b)-suf]
	n, m := len(ma), len(mb)
	if (n+1)*(m+1) > maxDiffCells {
		for i := range ma {
			ops = append(ops, diffOp{'-', ma[i], pre + i, pre})
		}
		for j := range mb {
			ops = append(ops, diffOp{'+', mb[j], pre + n, pre + j})
		}
	} else {
		// lcs[i][j] = LCS length of ma[i:] and mb[j:].
		lcs := make([][]int32, n+1)
		for i := range lcs {
			lcs[i] = make([]int32, m+1)
		}
		for i := n - 1; i >= 0; i-- {
			for j := m - 1; j >= 0; j-- {
				if ma[i] == mb[j] {
					lcs[i][j] = lcs[i+1][j+1] + 1
				} else {
					lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
				}
			}
		}
		i, j := 0, 0
		for i < n || j < m {
			switch {
			case i < n && j < m && ma[i] == mb[j]:
				ops = append(ops, diffOp{' ', ma[i], pre + i, pre + j})
				i++
				j++
			case i < n && (j == m || lcs[i+1][j] >= lcs[i][j+1]):
				ops = append(ops, diffOp{'-', ma[i], pre + i, pre + j})
				i++
			default:
				ops = append(ops, diffOp{'+', mb[j], pre + i, pre + j})
				j++
			}
		}
	}
	for k := 0; k < suf; k++ {
		ia, ib := len(a)-suf+k, len(b)-suf+k
		ops = append(ops, diffOp{' ', a[ia], ia, ib})
	}
	return ops
}
