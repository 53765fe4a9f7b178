package ctext

import "strconv"

// Appenders for the printf conversions of the C tools' per-port lines, so
// that a big fabric's text is built without fmt (which was most of the
// printers' time). Widths count bytes, as C's do.

// AppendPadded appends s right-aligned in width bytes: C's %<width>s.
func AppendPadded(b []byte, s string, width int) []byte {
	for n := len(s); n < width; n++ {
		b = append(b, ' ')
	}
	return append(b, s...)
}

// AppendPaddedUint appends v right-aligned in width bytes: C's %<width>u.
func AppendPaddedUint(b []byte, v uint64, width int) []byte {
	var digits [20]byte
	d := strconv.AppendUint(digits[:0], v, 10)
	for n := len(d); n < width; n++ {
		b = append(b, ' ')
	}
	return append(b, d...)
}

// AppendHex16 appends v as 16 hex digits: C's %016lx.
func AppendHex16(b []byte, v uint64) []byte {
	const digits = "0123456789abcdef"
	for shift := 60; shift >= 0; shift -= 4 {
		b = append(b, digits[v>>uint(shift)&0xF])
	}
	return b
}

// AppendZeroPadded appends v in base 10 or 16 with at least width digits:
// C's %0<width>d and %0<width>x.
func AppendZeroPadded(b []byte, v uint64, base, width int) []byte {
	var digits [20]byte
	d := strconv.AppendUint(digits[:0], v, base)
	for n := len(d); n < width; n++ {
		b = append(b, '0')
	}
	return append(b, d...)
}
