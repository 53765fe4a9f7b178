package ctext

import (
	"math"
	"strings"
)

// cNumber is what glibc's strtoul and strtol read of s: leading blanks, a
// sign, then with base 0 a 0x (hex), 0 (octal) or decimal number, with
// base 10 a decimal one, as far as it goes. mag is its magnitude
// (saturated on overflow); digits is false when no digit was read (a "0x"
// with no hex digit after it reads as 0).
func cNumber(s string, base uint64) (mag uint64, neg, digits, overflow bool) {
	s = strings.TrimLeft(s, " \t\n\v\f\r")
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	switch {
	case base != 0:
	case len(s) > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') && IsXDigit(s[2]):
		base, s = 16, s[2:]
	case s != "" && s[0] == '0':
		base = 8
	default:
		base = 10
	}
	for ; s != ""; s = s[1:] {
		d := HexDigit(s[0])
		if d >= base {
			break
		}
		digits = true
		if mag > (math.MaxUint64-d)/base {
			overflow = true
		}
		if overflow {
			mag = math.MaxUint64
			continue
		}
		mag = mag*base + d
	}
	return mag, neg, digits, overflow
}

// Strtoul is C's strtoul(s, NULL, 0) as the C tools read numeric
// arguments: "12abc" is 12, "abc" is 0; ok is false when no digit was
// read. A negative number wraps ("-1" is the largest value), and a number
// too large either way is the largest value (ERANGE), as in glibc.
func Strtoul(s string) (v uint64, ok bool) {
	mag, neg, digits, overflow := cNumber(s, 0)
	switch {
	case overflow:
		return math.MaxUint64, digits
	case neg:
		return -mag, digits
	}
	return mag, digits
}

// Strtol is C's strtol(s, NULL, 0): read as Strtoul reads, signed, and
// clamped to the int64 range on overflow (ERANGE), as in glibc.
func Strtol(s string) int64 { return strtol(s, 0) }

// Atoi is C's atoi: glibc's (int)strtol(s, NULL, 10), decimal only ("010"
// is 10), the long cut to a 32-bit int.
func Atoi(s string) int32 { return int32(strtol(s, 10)) }

func strtol(s string, base uint64) int64 {
	mag, neg, _, overflow := cNumber(s, base)
	switch {
	case neg && (overflow || mag >= 1<<63):
		return math.MinInt64
	case neg:
		return -int64(mag)
	case overflow || mag > math.MaxInt64:
		return math.MaxInt64
	}
	return int64(mag)
}

// HexDigit is the value of a hex digit c, or 99 for any other byte (more
// than any base's digits).
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

// IsXDigit and IsAlpha are C's isxdigit and isalpha in the C locale.
func IsXDigit(c byte) bool { return HexDigit(c) < 16 }

func IsAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
