package hostlist

import (
	"strings"
	"testing"
)

// The expected strings are what Slurm's hostlist_uniq followed by
// hostlist_ranged_string gives for these names (worked through by hand
// from src/common/hostlist.c: parse, _width_equiv, hostrange_join,
// _get_bracketed_list).
func TestCompress(t *testing.T) {
	for _, tc := range []struct {
		names []string
		want  string
	}{
		{nil, ""},
		{[]string{"node01"}, "node01"},
		{[]string{"node04", "node01", "node03", "node02", "node07"}, "node[01-04,07]"},
		{[]string{"node01", "node01", "node02"}, "node[01-02]"},
		{[]string{"n9", "n10", "n11"}, "n[9-11]"}, // unpadded widths are equivalent
		{[]string{"n1", "n01"}, "n[1,01]"},        // padded and unpadded are not
		{[]string{"n09", "n10"}, "n[09-10]"},      // same width
		{[]string{"n009", "n10"}, "n[10,009]"},    // incompatible widths sort by width
		{[]string{"login", "node1", "node2"}, "login,node[1-2]"},
		{[]string{"node2", "login", "admin"}, "admin,login,node2"},
		{[]string{"rack10-n1", "rack2-n1", "rack2-n2"}, "rack2-n[1-2],rack10-n1"}, // prefixes in natural order
		{[]string{"a1", "b1", "a2", "a4"}, "a[1-2,4],b1"},
		{[]string{"x", "x", "x1"}, "x,x1"},
		{[]string{"node10", "node9", "node09"}, "node[9,09-10]"},
		{[]string{"node0001", "node0002", "node0003", "node0010"}, "node[0001-0003,0010]"},
	} {
		if got := Compress(tc.names); got != tc.want {
			t.Errorf("Compress(%q) = %q, want %q", tc.names, got, tc.want)
		}
	}
}

func TestSorted(t *testing.T) {
	got := Sorted([]string{"node10", "node9", "login", "node09", "rack10-a", "rack2-a", "node9"})
	// node9 and node09 have incompatible widths: by width, then node09 < node10.
	want := []string{"login", "node9", "node09", "node10", "rack2-a", "rack10-a"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("Sorted = %q, want %q", got, want)
	}
	if s := Sorted(nil); s == nil || len(s) != 0 {
		t.Errorf("Sorted(nil) = %#v, want an empty list", s)
	}
}
