// Package umad moves MADs between ibtool and a local InfiniBand port. Two
// transports implement Port: the Linux kernel's umad interface
// (/dev/infiniband/umadN) and the ibsim simulator's socket protocol. Both
// also describe the local CAs and ports (what ibstat shows).
package umad

import (
	"errors"
	"time"
)

// MADSize is the size of one MAD on the wire (IBA 13.4.1).
const MADSize = 256

// PermissiveLID addresses a directed-route SMP (IBA 14.2.2.2).
const PermissiveLID = 0xFFFF

// QP1QKey is the well-known Q_Key of the general services QP (IBA 3.5.3).
const QP1QKey = 0x80010000

// StatusTimeout is the status a transport gives a request it hands back
// undelivered: the kernel after its own timeout, ibsim at once when it has
// no route (ETIMEDOUT).
const StatusTimeout = 110

// Address says where a MAD goes, or where a received MAD came from.
type Address struct {
	LID       uint16 // destination (send) or source (receive) LID; PermissiveLID for DR SMPs
	QP        uint32 // 0 for SMPs, 1 for GMPs
	QKey      uint32
	SL        uint8
	PathBits  uint8
	PKeyIndex uint16
	GRH       *GRH // nil when no global route header is used
}

// GRH holds the global routing fields of an Address (IBA 8.3).
type GRH struct {
	GID          [16]byte
	GIDIndex     uint8
	HopLimit     uint8
	TrafficClass uint8
	FlowLabel    uint32
}

// Packet is one MAD with its address.
type Packet struct {
	Addr Address
	// Status is 0 for a MAD that arrived, StatusTimeout for a request the
	// transport gave back undelivered.
	Status int
	// MAD holds the MAD: 256 bytes, or more for an RMPP message the kernel
	// reassembled.
	MAD []byte
	// Length is how many bytes of MAD the sender filled, when a transport
	// knows it is fewer than len(MAD) (ibsim forwards SA replies of, say,
	// 128 bytes, zero-padded to 256). 0 means all of MAD.
	Length int
}

// ValidLen is the number of meaningful bytes in p.MAD.
func (p *Packet) ValidLen() int {
	if p.Length > 0 && p.Length < len(p.MAD) {
		return p.Length
	}
	return len(p.MAD)
}

// Recycler is implemented by ports that can reuse the memory of a packet
// they received: Recycle hands back a packet from Recv or RecvBatch that
// nothing refers to any more (not its MAD either).
type Recycler interface {
	Recycle(p *Packet)
}

// Port is an open local port.
type Port interface {
	// Send queues one MAD for transmission.
	Send(p *Packet) error
	// Recv returns the next MAD: a reply, a request given back undelivered,
	// or an unsolicited request. It returns ErrTimeout at the deadline and
	// ErrClosed once the port is closed.
	Recv(deadline time.Time) (*Packet, error)
	// Info describes the port, re-read from its source on every call.
	Info() (PortInfo, error)
	// Close releases the port (and, for ibsim, its simulator slot).
	Close() error
}

// Errors shared by both transports.
var (
	ErrTimeout = errors.New("timed out waiting for a MAD")
	ErrClosed  = errors.New("port closed")
)

// CA describes a local channel adapter (or switch, under the simulator) as
// sysfs does.
type CA struct {
	Name         string // "mlx5_0", "ibsim0"
	NodeType     int    // 1 CA, 2 switch, 3 router (sysfs node_type)
	Type         string // hca_type, e.g. "MT4123" or "simulator"
	FWVersion    string
	HWRevision   string
	NodeGUID     uint64
	SysImageGUID uint64
	Ports        []PortInfo
}

// PortInfo describes one local port as sysfs does.
type PortInfo struct {
	CA        string
	Num       int // port number; 0 for a switch's management port
	LID       uint16
	LMC       uint8
	SMLID     uint16
	SMSL      uint8
	State     int    // IBA PortState: 1 Down, 2 Init, 3 Armed, 4 Active
	PhysState int    // IBA PortPhysicalState: 5 LinkUp, ...
	Rate      string // sysfs rate text, e.g. "100 Gb/sec (4X EDR)"
	CapMask   uint32
	PortGUID  uint64
	GIDPrefix uint64
	LinkLayer string   // "InfiniBand" or "Ethernet"
	GIDs      []string // the sysfs gids/N text, index = GID index
	PKeys     []uint16
}

// Opener opens local ports and lists local CAs through one transport.
type Opener interface {
	// Name is "kernel" or "ibsim".
	Name() string
	// CAs lists the local CAs and their ports.
	CAs() ([]CA, error)
	// Open opens a local port. An empty ca chooses the first CA with an
	// Active port; a negative port chooses the CA's first Active port (or its
	// first port when none is Active).
	Open(ca string, port int) (Port, error)
}

// Server is implemented by ports that can receive unsolicited requests (a
// MAD server such as ibping -S). Serve asks for requests of a class with
// the given methods.
type Server interface {
	Serve(class, version uint8, oui uint32, methods ...uint8) error
}

// InFlightLimiter is implemented by ports that can only take so many
// outstanding requests; the MAD engine keeps its window below the limit.
type InFlightLimiter interface {
	MaxInFlight() int
}
