package ctext

import (
	"math"
	"testing"
)

// glibc's answers for strtoul(s, NULL, 0) and strtol(s, NULL, 0), from
// libc itself (Python's ctypes); ok is whether a digit was read.
func TestStrtoulStrtolMatchGlibc(t *testing.T) {
	for _, tc := range []struct {
		in  string
		ul  uint64
		ok  bool
		l   int64
		why string
	}{
		{"12", 12, true, 12, "decimal"},
		{"12abc", 12, true, 12, "read as far as it goes"},
		{"abc", 0, false, 0, "no digit"},
		{"", 0, false, 0, "nothing"},
		{"0x1f", 31, true, 31, "hex prefix"},
		{"0X10", 16, true, 16, "hex prefix, capital"},
		{"010", 8, true, 8, "octal prefix"},
		{"08", 0, true, 0, "octal stops at 8"},
		{"0x", 0, true, 0, "0x without a hex digit is the 0"},
		{"0xg", 0, true, 0, "0x without a hex digit is the 0"},
		{"0x-1", 0, true, 0, "no sign after the prefix"},
		{" \t+0x1F", 31, true, 31, "blanks and a sign before the prefix"},
		{"\n\v\f\r7", 7, true, 7, "every C blank"},
		{"+-3", 0, false, 0, "one sign only"},
		{"-0", 0, true, 0, "negative zero"},
		{"-1", math.MaxUint64, true, -1, "a negative number wraps"},
		{" -5", math.MaxUint64 - 4, true, -5, "a negative number wraps"},
		{"18446744073709551615", math.MaxUint64, true, math.MaxInt64, "the largest unsigned long"},
		{"18446744073709551616", math.MaxUint64, true, math.MaxInt64, "overflow: ERANGE"},
		{"99999999999999999999", math.MaxUint64, true, math.MaxInt64, "overflow: ERANGE"},
		{"-99999999999999999999", math.MaxUint64, true, math.MinInt64, "overflow of a negative number is the largest, not wrapped"},
		{"-18446744073709551615", 1, true, math.MinInt64, "in range, then negated"},
		{"-18446744073709551616", math.MaxUint64, true, math.MinInt64, "overflow of a negative number"},
		{"9223372036854775808", 1 << 63, true, math.MaxInt64, "strtol clamps"},
		{"-0x8000000000000000", 1 << 63, true, math.MinInt64, "the smallest long"},
		{"-9223372036854775809", math.MaxInt64, true, math.MinInt64, "strtol clamps"},
		{"0xffffffffffffffffff", math.MaxUint64, true, math.MaxInt64, "hex overflow"},
	} {
		if v, ok := Strtoul(tc.in); v != tc.ul || ok != tc.ok {
			t.Errorf("Strtoul(%q) = %d, %v; want %d, %v (%s)", tc.in, v, ok, tc.ul, tc.ok, tc.why)
		}
		if v := Strtol(tc.in); v != tc.l {
			t.Errorf("Strtol(%q) = %d; want %d (%s)", tc.in, v, tc.l, tc.why)
		}
	}
}

func TestCTypes(t *testing.T) {
	for c := 0; c < 256; c++ {
		b := byte(c)
		wantX := b >= '0' && b <= '9' || b >= 'a' && b <= 'f' || b >= 'A' && b <= 'F'
		wantA := b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z'
		if IsXDigit(b) != wantX || IsAlpha(b) != wantA {
			t.Errorf("byte %#x: IsXDigit %v IsAlpha %v", c, IsXDigit(b), IsAlpha(b))
		}
	}
}

// glibc's atoi (Python's ctypes): decimal only, the long cut to an int.
func TestAtoiMatchesGlibc(t *testing.T) {
	for in, want := range map[string]int32{
		"010": 10, "08": 8, "0x10": 0, " -1": -1, "+7x": 7, "abc": 0, "": 0, "+": 0, "\t+7 8": 7,
		"4294967297": 1, "2147483648": -2147483648, "99999999999999999999": -1, "-99999999999999999999": 0,
	} {
		if got := Atoi(in); got != want {
			t.Errorf("Atoi(%q) = %d, want %d", in, got, want)
		}
	}
}
