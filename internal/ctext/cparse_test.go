package ctext

import "testing"

func TestCStrtol(t *testing.T) {
	for in, want := range map[string]int64{
		"2": 2, "0x10": 16, "010": 8, " 7": 7, "-3": -3, "+4": 4, "junk": 0, "": 0, "3abc": 3,
		"0x": 0, "09": 0, "99999999999999999999": 1<<63 - 1, "-99999999999999999999": -1 << 63,
		"9223372036854775807": 1<<63 - 1, "-9223372036854775808": -1 << 63, "0xffffffffffffffffff": 1<<63 - 1,
	} {
		if got := Strtol(in); got != want {
			t.Errorf("cStrtol(%q) = %d; want %d", in, got, want)
		}
	}
}
