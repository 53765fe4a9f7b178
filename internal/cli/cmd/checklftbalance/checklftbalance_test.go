package checklftbalance

import "testing"

func TestPerlNum(t *testing.T) {
	for s, want := range map[string]float64{"node0001 HCA-1": 0, "12host": 12, " 7": 7, "": 0, "001": 1, "-3x": -3} {
		if got := perlNum(s); got != want {
			t.Errorf("perlNum(%q) = %v, want %v", s, got, want)
		}
	}
}
