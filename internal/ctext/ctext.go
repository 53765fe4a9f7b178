package ctext

import "strconv"

// GUIDText and PortText print an end the script found no link for as
// empty, as its undefined hash entries print; a GUID otherwise as
// "0x%016x".
func GUIDText[G ~uint64](g G) string {
	if g == 0 {
		return ""
	}
	return string(AppendHex16([]byte("0x"), uint64(g)))
}

func PortText(p int) string {
	if p == 0 {
		return ""
	}
	return strconv.Itoa(p)
}

// OrZero is s, or "0" for an empty s (a C tool's atoi of nothing).
func OrZero(s string) string {
	if s == "" {
		return "0"
	}
	return s
}

// Plural is one for a count of 1, else many.
func Plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
