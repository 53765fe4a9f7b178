package ctext

import (
	"strconv"
	"strings"
)

// Strtoul is C's strtoul(s, NULL, 0) as the C tools read numeric
// arguments: leading blanks and a sign, then a 0x (hex), 0 (octal) or
// decimal number, read as far as it goes ("12abc" is 12, "abc" is 0); ok is
// false when no digit was read. A negative number wraps, as in C.
func Strtoul(s string) (v uint64, ok bool) {
	s = strings.TrimLeft(s, " \t\n\v\f\r")
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	base := uint64(10)
	switch {
	case len(s) > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') && HexDigit(s[2]) < 16:
		base, s = 16, s[2:]
	case len(s) > 0 && s[0] == '0':
		base = 8
	}
	for ; s != ""; s = s[1:] {
		d := HexDigit(s[0])
		if d >= base {
			break
		}
		if v > (^uint64(0)-d)/base {
			v = ^uint64(0) // ERANGE: ULONG_MAX
		} else {
			v = v*base + d
		}
		ok = true
	}
	if neg {
		v = -v
	}
	return v, ok
}

// Strtol is C's strtol(s, NULL, 0): read as Strtoul reads, signed, and
// clamped to the int64 range on overflow (as strconv.ParseInt clamps).
func Strtol(s string) int64 {
	s = strings.TrimLeft(s, " \t\n\v\f\r")
	sign := ""
	if s != "" && (s[0] == '+' || s[0] == '-') {
		sign, s = s[:1], s[1:]
	}
	base := uint64(10)
	switch {
	case len(s) > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') && HexDigit(s[2]) < 16:
		base, s = 16, s[2:]
	case len(s) > 0 && s[0] == '0':
		base = 8
	}
	end := 0
	for end < len(s) && HexDigit(s[end]) < base {
		end++
	}
	v, _ := strconv.ParseInt(sign+s[:end], int(base), 64)
	return v
}

func HexDigit(c byte) uint64 {
	switch {
	case c >= '0' && c <= '9':
		return uint64(c - '0')
	case c >= 'a' && c <= 'f':
		return uint64(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return uint64(c-'A') + 10
	}
	return 99
}

// AtoiPrefix keeps what atoi reads of s: blanks, a sign and decimal digits.
func AtoiPrefix(s string) string {
	i := 0
	for i < len(s) && (s[i] == ' ' || s[i] >= '\t' && s[i] <= '\r') {
		i++
	}
	j := i
	if j < len(s) && (s[j] == '+' || s[j] == '-') {
		j++
	}
	for j < len(s) && s[j] >= '0' && s[j] <= '9' {
		j++
	}
	if j == i || (j == i+1 && (s[i] == '+' || s[i] == '-')) {
		return "0"
	}
	return s[i:j]
}
