package mad

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// GUID is an EUI-64 (IBA 4.1.1): node, port and system image GUIDs.
type GUID uint64

// String formats g as infiniband-diags does: 0x and 16 hex digits.
func (g GUID) String() string { return fmt.Sprintf("0x%016x", uint64(g)) }

// MarshalText makes GUIDs JSON strings ("0x0002c90300001234").
func (g GUID) MarshalText() ([]byte, error) { return []byte(g.String()), nil }

// UnmarshalText accepts hex with or without 0x.
func (g *GUID) UnmarshalText(b []byte) error {
	s := strings.TrimPrefix(strings.TrimPrefix(string(b), "0x"), "0X")
	v, err := strconv.ParseUint(s, 16, 64)
	if err != nil {
		return fmt.Errorf("mad: bad GUID %q", b)
	}
	*g = GUID(v)
	return nil
}

// GID is a 128-bit global identifier (IBA 4.1.1), an IPv6 address on the
// wire: 64-bit subnet prefix, then the port GUID.
type GID [16]byte

// Prefix returns the subnet prefix (the high 64 bits).
func (g GID) Prefix() uint64 {
	return uint64(g[0])<<56 | uint64(g[1])<<48 | uint64(g[2])<<40 | uint64(g[3])<<32 |
		uint64(g[4])<<24 | uint64(g[5])<<16 | uint64(g[6])<<8 | uint64(g[7])
}

// GUID returns the interface ID (the low 64 bits).
func (g GID) GUID() GUID {
	return GUID(uint64(g[8])<<56 | uint64(g[9])<<48 | uint64(g[10])<<40 | uint64(g[11])<<32 |
		uint64(g[12])<<24 | uint64(g[13])<<16 | uint64(g[14])<<8 | uint64(g[15]))
}

// String formats g as inet_ntop does for IPv6, as saquery prints GIDs:
// fe80::2:c903:0:1234.
func (g GID) String() string { return netip.AddrFrom16(g).String() }

// MarshalText makes GIDs JSON strings in String's form.
func (g GID) MarshalText() ([]byte, error) { return []byte(g.String()), nil }

// UnmarshalText parses the IPv6 text form.
func (g *GID) UnmarshalText(b []byte) error {
	a, err := netip.ParseAddr(string(b))
	if err != nil || !a.Is6() {
		return fmt.Errorf("mad: bad GID %q", b)
	}
	*g = a.As16()
	return nil
}

// String returns the node description up to its first NUL.
func (d *NodeDescription) String() string {
	b := d.NodeString[:]
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}
