// Package endport parses the ways operators name a port: LIDs, port GUIDs,
// GIDs and directed-route paths, as infiniband-diags and python-rdma accept
// them.
package endport

import (
	"fmt"
	"strconv"
	"strings"
)

// Unicast LIDs are 1..0xBFFF (IBA 4.1.3); 0xC000..0xFFFE are multicast.
const (
	MinUnicastLID = 0x0001
	MaxUnicastLID = 0xBFFF
	// MaxDRHops is the longest directed route (IBA 14.2.1.2).
	MaxDRHops = 63
)

// ParseUint parses a number the way the C tools' strtoul(s, NULL, 0) does:
// decimal, 0x hex or leading-0 octal; bits limits its size.
func ParseUint(s string, bits int) (uint64, error) {
	if s == "" || strings.ContainsAny(s, "_+- \t") {
		return 0, fmt.Errorf("%q is not a number", s)
	}
	v, err := strconv.ParseUint(s, 0, bits)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return 0, fmt.Errorf("%q is too large (at most %d bits)", s, bits)
		}
		return 0, fmt.Errorf("%q is not a number", s)
	}
	return v, nil
}

// ParseLID parses a unicast LID ("12", "0xc").
func ParseLID(s string) (uint16, error) {
	v, err := ParseUint(s, 16)
	if err != nil {
		if strings.Contains(s, ",") {
			return 0, fmt.Errorf("invalid LID %q: it looks like a directed route, use -D", s)
		}
		return 0, fmt.Errorf("invalid LID %q: %v", s, err)
	}
	if v < MinUnicastLID || v > MaxUnicastLID {
		return 0, fmt.Errorf("invalid LID %q: a unicast LID is 1..%d (0x%x)", s, MaxUnicastLID, MaxUnicastLID)
	}
	return uint16(v), nil
}

// ParseDRPath parses a directed route "0,1,3" (a trailing comma is allowed,
// and a bare "0" means the local port). The result starts with the local
// port 0 and lists one egress port per hop.
func ParseDRPath(s string) ([]byte, error) {
	if !strings.Contains(s, ",") {
		s += ","
	}
	parts := strings.Split(strings.TrimSuffix(s, ","), ",")
	if len(parts)-1 > MaxDRHops {
		return nil, fmt.Errorf("invalid directed route %q: %d hops, at most %d", s, len(parts)-1, MaxDRHops)
	}
	path := make([]byte, len(parts))
	for i, p := range parts {
		v, err := strconv.ParseUint(strings.TrimSpace(p), 10, 8)
		if err != nil || v > 254 {
			return nil, fmt.Errorf("invalid directed route %q: hop %d %q is not a port number 0..254", strings.TrimSuffix(s, ","), i, p)
		}
		if i == 0 && v != 0 {
			return nil, fmt.Errorf("invalid directed route %q: it must start at the local port 0", strings.TrimSuffix(s, ","))
		}
		if i > 0 && v == 0 {
			return nil, fmt.Errorf("invalid directed route %q: hop %d is port 0, which is no egress port", strings.TrimSuffix(s, ","), i)
		}
		path[i] = byte(v)
	}
	return path, nil
}
