package mad

// SA methods that header.go does not list (IBA 15.2.2, Table 198).
const (
	MethodGetTraceTable = 0x13
	MethodGetMulti      = 0x14
	MethodDelete        = 0x15
)

// Vendor classes ibtool knows (IBA 13.4.4: range 1 is 0x09..0x0F, range 2,
// whose MADs carry an OUI, 0x30..0x4F). header.go has ClassVendorOFA, the
// ping class.
const (
	ClassVendorMlnx       = 0x0A // Mellanox: GeneralInfo and config space (vendstat)
	ClassVendorOFASysStat = 0x33 // OFA sysstat (ibsysstat)

	// OUIOpenIB is the OUI of the OFA vendor classes (ibping, ibsysstat).
	OUIOpenIB = 0x001405
)

// Where the attribute data starts in a MAD (IBA 13.4.3, 14.2.1, 15.2.1.1,
// 16.1.2, 16.5): byte 56 in SA MADs (after the SA header), 24 in vendor
// classes of range 1 (right after the common header), 40 in those of range
// 2 (after the OUI), 64 in SMPs and the other GS classes.
const (
	SADataOffset      = 56
	Vendor1DataOffset = 24
	Vendor2DataOffset = 40
	GSDataOffset      = 64
)

// CCLogDataOffset is where a CongestionLog starts in a CC MAD (IBA
// A10.4.1): the log data area at byte 32 comes before the usual one.
const CCLogDataOffset = 32

// AttrDataOffset returns where attribute attrID of class starts in a MAD:
// DataOffset, except for the CongestionLog of class 0x21.
func AttrDataOffset(class uint8, attrID uint16) int {
	if class == ClassCongest && attrID == AttrCongestionLog {
		return CCLogDataOffset
	}
	return DataOffset(class)
}

// DataOffset returns where class's attribute data starts in a MAD.
func DataOffset(class uint8) int {
	switch {
	case class == ClassSubnAdm:
		return SADataOffset
	case class >= 0x09 && class <= 0x0f:
		return Vendor1DataOffset
	case class >= 0x30 && class <= 0x4f:
		return Vendor2DataOffset
	}
	return GSDataOffset
}
