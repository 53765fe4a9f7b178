package mad

import "fmt"

// IBA bit numbering (IBA 13.4.1, the attribute layout tables): bit 0 of a
// structure is the most significant bit of its byte 0, and multi-byte
// fields are big endian. getBits and putBits read and write a field of up
// to 64 bits at any such offset; the caller checks the bounds.

// getBits returns the width-bit field at bit offset off of b.
func getBits(b []byte, off, width int) uint64 {
	var v uint64
	for width > 0 {
		inByte := off % 8
		n := min(8-inByte, width)
		shift := 8 - inByte - n
		chunk := (b[off/8] >> shift) & byte(1<<n-1)
		v = v<<n | uint64(chunk)
		off += n
		width -= n
	}
	return v
}

// putBits stores the low width bits of v at bit offset off of b, leaving
// the other bits of b as they are.
func putBits(b []byte, off, width int, v uint64) {
	for width > 0 {
		inByte := off % 8
		n := min(8-inByte, width)
		shift := 8 - inByte - n
		mask := byte(1<<n-1) << shift
		chunk := byte(v>>(width-n)) << shift
		b[off/8] = b[off/8]&^mask | chunk&mask
		off += n
		width -= n
	}
}

// ShortBufferError is returned when a buffer is smaller than the structure
// to decode or encode.
type ShortBufferError struct {
	Struct string
	Need   int
	Have   int
}

func (e *ShortBufferError) Error() string {
	return fmt.Sprintf("mad: %s needs %d bytes, have %d", e.Struct, e.Need, e.Have)
}

func shortBuffer(name string, need, have int) error {
	return &ShortBufferError{Struct: name, Need: need, Have: have}
}
