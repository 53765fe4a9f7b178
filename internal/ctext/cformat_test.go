package ctext

import (
	"fmt"
	"testing"
)

// The appenders print what fmt prints for ASCII.
func TestCFormatAppenders(t *testing.T) {
	for _, s := range []string{"", "4X", "LinkUp", "a string longer than the width"} {
		for _, w := range []int{0, 2, 6, 18} {
			if got, want := string(AppendPadded(nil, s, w)), fmt.Sprintf("%*s", w, s); got != want {
				t.Errorf("appendPadded(%q, %d) = %q, want %q", s, w, got, want)
			}
		}
	}
	for _, v := range []uint64{0, 7, 65535, 1<<64 - 1} {
		for _, w := range []int{0, 4, 6} {
			if got, want := string(AppendPaddedUint(nil, v, w)), fmt.Sprintf("%*d", w, v); got != want {
				t.Errorf("appendPaddedUint(%d, %d) = %q, want %q", v, w, got, want)
			}
		}
		if got, want := string(AppendHex16(nil, v)), fmt.Sprintf("%016x", v); got != want {
			t.Errorf("appendHex16(%d) = %q, want %q", v, got, want)
		}
	}
	if got := string(AppendHex16(nil, 0xe41d2d03001f0001)); got != "e41d2d03001f0001" {
		t.Errorf("appendHex16 = %q", got)
	}
}
