package umad

import (
	"encoding/binary"
	"fmt"
)

// simCA describes the simulator attachment from the control channel's
// NodeInfo, PortInfo, vendor and P_Key replies, deriving every value the
// way umad2sim derives its fake sysfs, so ibtool and the C tools under
// umad2sim show the same data.
func simCA(nodeInfo, portInfo, vendor, pkeys []byte) CA {
	nodeGUID := binary.BigEndian.Uint64(nodeInfo[12:])
	portNum := int(portInfo[28]) // PortInfo.LocalPortNum
	port := PortInfo{
		CA:        SimCAName,
		Num:       portNum,
		LID:       binary.BigEndian.Uint16(portInfo[16:]),
		SMLID:     binary.BigEndian.Uint16(portInfo[18:]),
		CapMask:   binary.BigEndian.Uint32(portInfo[20:]),
		State:     int(portInfo[32] & 0x0F),
		PhysState: int(portInfo[33] >> 4),
		LMC:       portInfo[34] & 0x07,
		SMSL:      portInfo[36] & 0x0F,
		GIDPrefix: binary.BigEndian.Uint64(portInfo[8:]),
		// ibsim numbers a CA's port GUIDs NodeGUID+port; a switch has
		// port 0, so its port GUID is the node GUID.
		PortGUID: nodeGUID + uint64(portNum),
		Rate:     simRate(portInfo),
		// umad2sim writes no link_layer file, and libibumad then says "IB".
		LinkLayer: "IB",
	}
	port.GIDs = []string{SysfsGID(port.GIDPrefix, port.PortGUID)}
	for i := 0; i+1 < len(pkeys) && i < 64; i += 2 {
		port.PKeys = append(port.PKeys, binary.BigEndian.Uint16(pkeys[i:]))
	}
	return CA{
		Name:         SimCAName,
		NodeType:     int(nodeInfo[2]),
		Type:         "simulator",
		FWVersion:    fmt.Sprintf("%x", binary.LittleEndian.Uint64(vendor[16:])),
		HWRevision:   fmt.Sprintf("%x", binary.LittleEndian.Uint32(vendor[8:])),
		NodeGUID:     nodeGUID,
		SysImageGUID: binary.BigEndian.Uint64(nodeInfo[4:]),
		Ports:        []PortInfo{port},
	}
}

// capIsExtendedSpeedsSupported is PortInfo.CapabilityMask bit 14 (IBA 14.2.5.6).
const capIsExtendedSpeedsSupported = 1 << 14

// simRate renders the sysfs rate text of a port from its PortInfo, as
// umad2sim does (including its limits: no FDR10, nothing beyond HDR).
func simRate(pi []byte) string {
	lanes := map[byte]int{1: 1, 2: 4, 4: 8, 8: 12}[pi[31]] // LinkWidthActive
	ext := 0
	if binary.BigEndian.Uint32(pi[20:])&capIsExtendedSpeedsSupported != 0 {
		ext = int(pi[62] >> 4) // LinkSpeedExtActive
	}
	if ext == 0 {
		speed := int(pi[35] >> 4) // LinkSpeedActive: 1 SDR, 2 DDR, 4 QDR
		name := map[int]string{2: " DDR", 4: " QDR"}[speed]
		tenths := lanes * speed * 25
		half := ""
		if tenths%10 != 0 {
			half = ".5"
		}
		return fmt.Sprintf("%d%s Gb/sec (%dX%s)", tenths/10, half, lanes, name)
	}
	name := map[int]string{1: " FDR", 2: " EDR", 4: " HDR"}[ext]
	gbps := 26 * lanes
	if ext == 1 {
		gbps = 14 * lanes
	}
	return fmt.Sprintf("%d Gb/sec (%dX%s)", gbps, lanes, name)
}

// SysfsGID formats a GID as sysfs does: eight groups of four hex digits.
func SysfsGID(prefix, guid uint64) string {
	return fmt.Sprintf("%04x:%04x:%04x:%04x:%04x:%04x:%04x:%04x",
		uint16(prefix>>48), uint16(prefix>>32), uint16(prefix>>16), uint16(prefix),
		uint16(guid>>48), uint16(guid>>32), uint16(guid>>16), uint16(guid))
}
