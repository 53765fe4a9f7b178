package umad

import (
	"bytes"
	"encoding/binary"
	"testing"
)

// simFrame builds a frame as ibsim sends it: length bytes of MAD, all
// fill, from LID lid.
func simFrame(lid uint16, length int, fill byte) []byte {
	f := make([]byte, simFrameSize)
	binary.BigEndian.PutUint16(f[4:], lid)
	binary.BigEndian.PutUint64(f[24:], uint64(length))
	copy(f[simMADOffset:], bytes.Repeat([]byte{fill}, length))
	return f
}

// A recycled packet comes back from the next frame with nothing of its
// old contents: a short reply (an SA record, say) must not show the
// bytes of a longer one before it.
func TestSimRecycledPacketsCarryNothingOver(t *testing.T) {
	var conn simConn
	for i := 0; i < 3; i++ {
		long := decodeSimFrame(simFrame(7, MADSize, 0xAA))
		conn.Recycle(long)
		short := decodeSimFrame(simFrame(9, 128, 0x11))
		if short.Addr.LID != 9 || short.Length != 128 || len(short.MAD) != MADSize {
			t.Fatalf("short frame decoded as LID %d, length %d, %d MAD bytes", short.Addr.LID, short.Length, len(short.MAD))
		}
		if !bytes.Equal(short.MAD[:128], bytes.Repeat([]byte{0x11}, 128)) {
			t.Fatalf("MAD bytes 0-127 are % x", short.MAD[:128])
		}
		if !bytes.Equal(short.MAD[128:], make([]byte, MADSize-128)) {
			t.Fatalf("bytes past the reply's length are % x, want zeros", short.MAD[128:])
		}
		conn.Recycle(short)
	}
}

// Only packets of one MAD are taken back: a longer one (an RMPP message)
// would hand a later frame a MAD of the wrong size.
func TestSimRecycleRefusesOtherSizes(t *testing.T) {
	var conn simConn
	for i := 0; i < 10; i++ {
		conn.Recycle(&Packet{MAD: make([]byte, 2*MADSize)})
		conn.Recycle(nil)
		if p := decodeSimFrame(simFrame(1, MADSize, 0x22)); cap(p.MAD) != MADSize || len(p.MAD) != MADSize {
			t.Fatalf("decoded a packet with a MAD of len %d cap %d", len(p.MAD), cap(p.MAD))
		}
	}
}
