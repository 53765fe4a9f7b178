// Package mad is the wire format of management datagrams: headers and
// attributes, with no I/O.
package mad

import "encoding/binary"

// Size is the size of a MAD (IBA 13.4.1).
const Size = 256

// Management classes (IBA 13.4.4, Table 107).
const (
	ClassSubnLID   = 0x01 // LID-routed SMP
	ClassSubnAdm   = 0x03 // SA
	ClassPerf      = 0x04 // PerfMgt
	ClassCongest   = 0x21
	ClassSubnDR    = 0x81 // directed-route SMP
	ClassVendorOFA = 0x32 // OFA vendor range 2 class used by ibping
)

// Methods (IBA 13.4.5, Table 108).
const (
	MethodGet        = 0x01
	MethodSet        = 0x02
	MethodGetResp    = 0x81
	MethodSend       = 0x03
	MethodTrap       = 0x05
	MethodReport     = 0x06
	MethodReportResp = 0x86
	MethodTrapRepres = 0x07
	MethodGetTable   = 0x12
	MethodGetTblResp = 0x92
	MethodResponse   = 0x80 // the R bit
)

// Byte offsets of the common MAD header (IBA 13.4.2, Figure 144).
const (
	offBaseVersion  = 0
	offMgmtClass    = 1
	offClassVersion = 2
	offMethod       = 3
	offStatus       = 4
	offHopPointer   = 6 // DR SMP only (IBA 14.2.1.2)
	offHopCount     = 7
	offTID          = 8
	offAttrID       = 16
	offAttrMod      = 20
)

// Offsets inside a directed-route SMP (IBA 14.2.1.2, Figure 151).
const (
	offMKey        = 24
	offDrSLID      = 32
	offDrDLID      = 34
	SMPDataOffset  = 64
	SMPDataSize    = 64
	offInitialPath = 128
	offReturnPath  = 192
	// MaxDRHops is the longest directed route (IBA 14.2.1.2: 64 path bytes).
	MaxDRHops = 63
)

// DirectionBit is the D bit of a DR SMP's status word: set in returning SMPs.
const DirectionBit = 0x8000

// Header is a read/write view of the common header of a MAD buffer.
type Header []byte

func (h Header) BaseVersion() uint8  { return h[offBaseVersion] }
func (h Header) Class() uint8        { return h[offMgmtClass] }
func (h Header) ClassVersion() uint8 { return h[offClassVersion] }
func (h Header) Method() uint8       { return h[offMethod] }
func (h Header) IsResponse() bool    { return h[offMethod]&MethodResponse != 0 }
func (h Header) Status() uint16      { return binary.BigEndian.Uint16(h[offStatus:]) }
func (h Header) TID() uint64         { return binary.BigEndian.Uint64(h[offTID:]) }
func (h Header) AttrID() uint16      { return binary.BigEndian.Uint16(h[offAttrID:]) }
func (h Header) AttrMod() uint32     { return binary.BigEndian.Uint32(h[offAttrMod:]) }
func (h Header) HopPointer() uint8   { return h[offHopPointer] }
func (h Header) HopCount() uint8     { return h[offHopCount] }

func (h Header) SetTID(tid uint64) { binary.BigEndian.PutUint64(h[offTID:], tid) }

// TID32 is the part of the transaction ID a requester owns: transports
// rewrite the high bits (the kernel bits 63..32, ibsim 63..48), so replies
// are matched on the low 32 bits.
func (h Header) TID32() uint32 { return uint32(h.TID()) }

// SMPData returns the 64-byte attribute data area of an SMP.
func (h Header) SMPData() []byte { return h[SMPDataOffset : SMPDataOffset+SMPDataSize] }

// NewGet builds a Get request MAD header for a class and attribute.
func NewGet(class, classVersion uint8, attrID uint16, attrMod uint32) Header {
	return newRequest(class, classVersion, MethodGet, attrID, attrMod)
}

func newRequest(class, classVersion, method uint8, attrID uint16, attrMod uint32) Header {
	return initRequest(make(Header, Size), class, classVersion, method, attrID, attrMod)
}

// initRequest writes a request's common header into h, Size bytes of
// zeros.
func initRequest(h Header, class, classVersion, method uint8, attrID uint16, attrMod uint32) Header {
	h[offBaseVersion] = 1
	h[offMgmtClass] = class
	h[offClassVersion] = classVersion
	h[offMethod] = method
	binary.BigEndian.PutUint16(h[offAttrID:], attrID)
	binary.BigEndian.PutUint32(h[offAttrMod:], attrMod)
	return h
}

// NewRequest builds a request MAD for any class and method.
func NewRequest(class, classVersion, method uint8, attrID uint16, attrMod uint32) Header {
	return newRequest(class, classVersion, method, attrID, attrMod)
}

// InitRequest is NewRequest into h, which must be Size bytes of zeros: a
// fan-out over a fabric reuses its requests' memory.
func InitRequest(h Header, class, classVersion, method uint8, attrID uint16, attrMod uint32) Header {
	return initRequest(h, class, classVersion, method, attrID, attrMod)
}

// NewDRSMP builds a directed-route SMP request along path, where path[0] is
// 0 (the local port) and path[1:] are the egress ports of each hop
// (IBA 14.2.2). DrSLID and DrDLID are the permissive LID: the route is
// directed end to end.
func NewDRSMP(method uint8, attrID uint16, attrMod uint32, path []uint8) Header {
	return InitDRSMP(make(Header, Size), method, attrID, attrMod, path)
}

// InitDRSMP is NewDRSMP into h, which must be Size bytes of zeros: a walk
// that sends tens of thousands reuses their memory.
func InitDRSMP(h Header, method uint8, attrID uint16, attrMod uint32, path []uint8) Header {
	initRequest(h, ClassSubnDR, 1, method, attrID, attrMod)
	h[offHopCount] = uint8(len(path) - 1)
	binary.BigEndian.PutUint16(h[offDrSLID:], 0xFFFF)
	binary.BigEndian.PutUint16(h[offDrDLID:], 0xFFFF)
	copy(h[offInitialPath:], path)
	return h
}

// NewLIDSMP builds a LID-routed SMP request.
func NewLIDSMP(method uint8, attrID uint16, attrMod uint32) Header {
	return newRequest(ClassSubnLID, 1, method, attrID, attrMod)
}

// InitLIDSMP is NewLIDSMP into h, which must be Size bytes of zeros.
func InitLIDSMP(h Header, method uint8, attrID uint16, attrMod uint32) Header {
	return initRequest(h, ClassSubnLID, 1, method, attrID, attrMod)
}

// ReturnPath returns the return path a DR SMP response carries.
func (h Header) ReturnPath() []byte { return h[offReturnPath : offReturnPath+int(h.HopCount())+1] }
