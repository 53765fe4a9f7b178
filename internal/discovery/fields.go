package discovery

import "encoding/binary"

// The few attribute fields the walk and its replay read for every port,
// straight from the raw 64 bytes at their IBA offsets (14.2.5.3 NodeInfo,
// 14.2.5.6 PortInfo). The generated decoders in internal/mad read every
// field bit by bit; on a fabric of thousands of ports that shows. A test
// checks these against the generated decoders.

// rawPortInfo is a PortInfo as received; short or nil reads as zeros.
type rawPortInfo []byte

func (b rawPortInfo) ok() bool { return len(b) >= 64 }

func (b rawPortInfo) lid() uint16 {
	if !b.ok() {
		return 0
	}
	return binary.BigEndian.Uint16(b[16:])
}

func (b rawPortInfo) capMask() uint32 {
	if !b.ok() {
		return 0
	}
	return binary.BigEndian.Uint32(b[20:])
}

func (b rawPortInfo) localPort() int {
	if !b.ok() {
		return 0
	}
	return int(b[portInfoLocalPortOff])
}

func (b rawPortInfo) physState() uint8 { // bits 264..267
	if !b.ok() {
		return 0
	}
	return b[33] >> 4
}

func (b rawPortInfo) lmc() uint8 { // bits 277..279
	if !b.ok() {
		return 0
	}
	return b[34] & 7
}

func (b rawPortInfo) linkSpeedActive() uint8 { // bits 280..283
	if !b.ok() {
		return 0
	}
	return b[35] >> 4
}

func (b rawPortInfo) linkSpeedExtActive() uint8 { // bits 496..499
	if !b.ok() {
		return 0
	}
	return b[62] >> 4
}

// rawNodeInfo is a NodeInfo as received.
type rawNodeInfo []byte

func (b rawNodeInfo) ok() bool { return len(b) >= 40 }

func (b rawNodeInfo) deviceID() uint16 {
	if !b.ok() {
		return 0
	}
	return binary.BigEndian.Uint16(b[30:])
}

func (b rawNodeInfo) vendorID() uint32 { // bits 296..319
	if !b.ok() {
		return 0
	}
	return uint32(b[37])<<16 | uint32(b[38])<<8 | uint32(b[39])
}

const (
	physLinkUp       = 5      // PortPhysicalState LinkUp
	speedQDR         = 4      // LinkSpeedActive 10.0 Gbps
	capExtendedSpeed = 0x4000 // CapabilityMask IsExtendedSpeedsSupported
)
