// Package hostlist writes host names as Slurm's compressed hostlists
// ("node[01-04,07]"), following the rules of Slurm's src/common/hostlist.c
// for one-dimensional clusters, so that scontrol expands what we write
// back to the same names:
//
//   - a name splits into a prefix and a numeric suffix (its trailing
//     digits); the suffix's width is its digit count, leading zeros kept;
//     a name without trailing digits stands alone;
//   - two suffixes can share a range when their widths are "equivalent":
//     equal, or padding both to either width changes neither's zeros (so
//     n9 and n10 join as n[9-10], but n1 and n01 do not);
//   - the list is sorted (prefixes in natural order, then by suffix),
//     duplicates dropped, consecutive suffixes joined into lo-hi ranges,
//     and the ranges of one prefix written inside one pair of brackets;
//     a prefix with a single host is written without brackets.
package hostlist

import (
	"sort"
	"strconv"
	"strings"
)

// hostRange is Slurm's hostrange: prefix plus suffixes lo..hi printed
// zero-padded to width, or a single host without a numeric suffix.
type hostRange struct {
	prefix string
	lo, hi uint64
	width  int
	single bool
}

// parse splits a host name as Slurm's hostname_create does.
func parse(name string) hostRange {
	i := len(name)
	for i > 0 && name[i-1] >= '0' && name[i-1] <= '9' {
		i--
	}
	if i == len(name) {
		return hostRange{prefix: name, single: true}
	}
	n, err := strconv.ParseUint(name[i:], 10, 64)
	if err != nil { // more digits than 64 bits hold: keep the name whole
		return hostRange{prefix: name, single: true}
	}
	return hostRange{prefix: name[:i], lo: n, hi: n, width: len(name) - i}
}

// digits is the number of decimal digits of n.
func digits(n uint64) int {
	d := 1
	for n >= 10 {
		n /= 10
		d++
	}
	return d
}

// zeros is how many zeros padding n to width adds.
func zeros(n uint64, width int) int { return max(width-digits(n), 0) }

// equivWidths reports whether suffixes n (width wn) and m (width wm) can
// share a range, and the width the range then has (Slurm's _width_equiv).
func equivWidths(n uint64, wn int, m uint64, wm int) (int, bool) {
	if wn == wm {
		return wn, true
	}
	nSame := zeros(n, wn) == zeros(n, wm)
	mSame := zeros(m, wm) == zeros(m, wn)
	switch {
	case !nSame && !mSame:
		return 0, false
	case !nSame: // m reads the same at n's width
		return wn, true
	default:
		return wm, true
	}
}

// less orders ranges as Slurm's hostrange_cmp: prefix (natural order,
// hosts without a suffix first), then the lowest suffix when the widths
// are compatible, else the width.
func less(a, b hostRange) bool {
	if c := natCompare(a.prefix, b.prefix); c != 0 {
		return c < 0
	}
	if a.single != b.single {
		return a.single
	}
	if _, ok := equivWidths(a.lo, a.width, b.lo, b.width); ok {
		return a.lo < b.lo
	}
	return a.width < b.width
}

// Compress returns names as one Slurm hostlist expression, sorted and
// without duplicates; "" for no names.
func Compress(names []string) string {
	ranges := make([]hostRange, 0, len(names))
	for _, n := range names {
		ranges = append(ranges, parse(n))
	}
	sort.SliceStable(ranges, func(i, j int) bool { return less(ranges[i], ranges[j]) })
	var joined []hostRange
	for _, r := range ranges {
		if len(joined) > 0 && join(&joined[len(joined)-1], r) {
			continue
		}
		joined = append(joined, r)
	}
	var b strings.Builder
	for i := 0; i < len(joined); {
		if i > 0 {
			b.WriteByte(',')
		}
		i = writeBracketed(&b, joined, i)
	}
	return b.String()
}

// join merges r into prev when they touch or overlap (Slurm's
// hostrange_join); a duplicate single host is dropped.
func join(prev *hostRange, r hostRange) bool {
	if prev.prefix != r.prefix || prev.single != r.single {
		return false
	}
	if r.single {
		return true
	}
	w, ok := equivWidths(prev.lo, prev.width, r.lo, r.width)
	if !ok || r.lo > prev.hi+1 {
		return false
	}
	prev.width = w
	prev.hi = max(prev.hi, r.hi)
	return true
}

// writeBracketed writes the ranges from i that share a prefix as one
// prefix[...] expression and returns the index after them.
func writeBracketed(b *strings.Builder, rs []hostRange, i int) int {
	first := rs[i]
	b.WriteString(first.prefix)
	if first.single {
		return i + 1
	}
	sameBracket := func(j int) bool {
		return j < len(rs) && !rs[j].single && rs[j].prefix == first.prefix
	}
	bracket := first.hi > first.lo || sameBracket(i+1)
	if bracket {
		b.WriteByte('[')
	}
	for j := i; ; j++ {
		if j > i {
			b.WriteByte(',')
		}
		writeNum(b, rs[j].lo, rs[j].width)
		if rs[j].hi > rs[j].lo {
			b.WriteByte('-')
			writeNum(b, rs[j].hi, rs[j].width)
		}
		if !sameBracket(j + 1) {
			if bracket {
				b.WriteByte(']')
			}
			return j + 1
		}
	}
}

func writeNum(b *strings.Builder, n uint64, width int) {
	s := strconv.FormatUint(n, 10)
	for k := len(s); k < width; k++ {
		b.WriteByte('0')
	}
	b.WriteString(s)
}

// natCompare compares strings with runs of digits compared by value
// (rack2 before rack10), as Slurm's strnatcmp orders prefixes.
func natCompare(a, b string) int {
	for a != "" && b != "" {
		if isDigit(a[0]) && isDigit(b[0]) {
			da, db := digitRun(a), digitRun(b)
			na, nb := strings.TrimLeft(a[:da], "0"), strings.TrimLeft(b[:db], "0")
			if len(na) != len(nb) {
				return cmpInt(len(na), len(nb))
			}
			if c := strings.Compare(na, nb); c != 0 {
				return c
			}
			a, b = a[da:], b[db:]
			continue
		}
		if a[0] != b[0] {
			return cmpInt(int(a[0]), int(b[0]))
		}
		a, b = a[1:], b[1:]
	}
	return cmpInt(len(a), len(b))
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func digitRun(s string) int {
	i := 0
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	return i
}

func cmpInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Sorted returns names in the order Slurm sorts hosts (natural order of
// the prefix, then the numeric suffix), without duplicates; never nil.
func Sorted(names []string) []string {
	s := append([]string{}, names...)
	sort.SliceStable(s, func(i, j int) bool {
		a, b := parse(s[i]), parse(s[j])
		if less(a, b) != less(b, a) {
			return less(a, b)
		}
		return s[i] < s[j]
	})
	out := s[:0]
	for i, n := range s {
		if i == 0 || n != s[i-1] {
			out = append(out, n)
		}
	}
	return out
}
