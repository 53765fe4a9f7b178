package nodelists

import "testing"

func TestAwkSubstr(t *testing.T) {
	for _, tc := range []struct {
		s    string
		m    int
		n    []int
		want string
	}{
		{"hello", 1, nil, "hello"},
		{"hello", 0, nil, "hello"},
		{"hello", -1, nil, "hello"},
		{"hello", 2, []int{3}, "ell"},
		{"hello", 0, []int{2}, "h"},
		{"hello", 1, []int{-2}, ""},
		{"hello", 4, []int{16}, "lo"},
		{"hello", 9, nil, ""},
	} {
		if got := awkSubstr(tc.s, tc.m, tc.n...); got != tc.want {
			t.Errorf("substr(%q, %d, %v) = %q, want %q", tc.s, tc.m, tc.n, got, tc.want)
		}
	}
}
