package mad

// SA methods that header.go does not list (IBA 15.2.2, Table 198).
const (
	MethodGetTraceTable = 0x13
	MethodGetMulti      = 0x14
	MethodDelete        = 0x15
)

// Where the attribute data starts in a MAD (IBA 13.4.3, 14.2.1, 15.2.1.1,
// 16.1.2, 16.5): byte 56 in SA MADs (after the SA header), 40 in vendor
// classes of range 2 (after the OUI), 64 in SMPs and the other GS classes.
const (
	SADataOffset      = 56
	Vendor2DataOffset = 40
	GSDataOffset      = 64
)

// DataOffset returns where class's attribute data starts in a MAD.
func DataOffset(class uint8) int {
	switch {
	case class == ClassSubnAdm:
		return SADataOffset
	case class >= 0x30 && class <= 0x4f:
		return Vendor2DataOffset
	}
	return GSDataOffset
}
