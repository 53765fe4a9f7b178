package endport

import (
	"fmt"
	"strings"

	"github.com/ibtool/ibtool/internal/umad"
)

// Local is a chosen local port: a CA name and a port number. Port -1 means
// "the CA's default port".
type Local struct {
	CA   string
	Port int
}

// SelectLocal resolves -C and -P against the local CAs the way the C tools
// and python-rdma do: -C is a CA name or node GUID; -P is a port number, or
// (without -C) a port GUID, a port GID or "ca/port". With neither, the
// first Active port wins (then the first port in Init or better, then the
// first port).
func SelectLocal(cas []umad.CA, ca, port string) (Local, error) {
	if ca == "" && port == "" {
		return defaultPort(cas, cas)
	}
	var chosen []umad.CA
	if ca != "" {
		c, err := findCA(cas, ca)
		if err != nil {
			return Local{}, err
		}
		chosen = []umad.CA{c}
	}
	if port == "" {
		return defaultPort(chosen, cas)
	}
	if n, err := ParseUint(port, 8); err == nil {
		if chosen == nil {
			l, err := defaultPort(cas, cas)
			if err != nil {
				return Local{}, err
			}
			c, _ := findCA(cas, l.CA)
			chosen = []umad.CA{c}
		}
		for _, p := range chosen[0].Ports {
			if p.Num == int(n) {
				return Local{CA: chosen[0].Name, Port: p.Num}, nil
			}
		}
		return Local{}, fmt.Errorf("local port %d not found on %s", n, chosen[0].Name)
	}
	if chosen != nil {
		return Local{}, fmt.Errorf("invalid local port -P %q: with -C, -P is a port number", port)
	}
	return findPortByName(cas, port)
}

func findCA(cas []umad.CA, name string) (umad.CA, error) {
	guid, guidErr := parseAnyGUID(name)
	for _, c := range cas {
		if c.Name == name || (guidErr == nil && c.NodeGUID == guid) {
			return c, nil
		}
	}
	return umad.CA{}, fmt.Errorf("local CA %q not found (have %s)", name, caNames(cas))
}

// findPortByName resolves "ca/port", a port GUID or a port GID.
func findPortByName(cas []umad.CA, name string) (Local, error) {
	if caName, num, ok := strings.Cut(name, "/"); ok {
		n, err := ParseUint(num, 8)
		if err != nil {
			return Local{}, fmt.Errorf("invalid local port %q: %v", name, err)
		}
		c, err := findCA(cas, caName)
		if err != nil {
			return Local{}, err
		}
		return SelectLocal([]umad.CA{c}, c.Name, fmt.Sprint(n))
	}
	if gid, err := ParseGID(name); err == nil {
		for _, c := range cas {
			for _, p := range c.Ports {
				for _, g := range p.GIDs {
					if pg, err := ParseGID(g); err == nil && pg == gid {
						return Local{CA: c.Name, Port: p.Num}, nil
					}
				}
				if GIDFromGUID(p.PortGUID) == gid {
					return Local{CA: c.Name, Port: p.Num}, nil
				}
			}
		}
		return Local{}, fmt.Errorf("no local port has GID %s", name)
	}
	guid, err := parseAnyGUID(name)
	if err != nil {
		return Local{}, fmt.Errorf("invalid local port %q: use a number, ca/port, a port GUID or a GID", name)
	}
	for _, c := range cas {
		for _, p := range c.Ports {
			if p.PortGUID == guid {
				return Local{CA: c.Name, Port: p.Num}, nil
			}
		}
	}
	return Local{}, fmt.Errorf("no local port has GUID %s", name)
}

// defaultPort picks the best port among cas (all is for the error message).
func defaultPort(among, all []umad.CA) (Local, error) {
	for _, good := range []func(umad.PortInfo) bool{
		func(p umad.PortInfo) bool { return p.State == 4 }, // Active
		func(p umad.PortInfo) bool { return p.State >= 2 }, // Init or better
		func(umad.PortInfo) bool { return true },
	} {
		for _, c := range among {
			for _, p := range c.Ports {
				if good(p) {
					return Local{CA: c.Name, Port: p.Num}, nil
				}
			}
		}
	}
	if len(all) == 0 {
		return Local{}, fmt.Errorf("no local InfiniBand CA found")
	}
	return Local{}, fmt.Errorf("no port found on %s", caNames(among))
}

func parseAnyGUID(s string) (uint64, error) {
	if strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X") {
		return ParseUint(s, 64)
	}
	return ParseGUID(s)
}

func caNames(cas []umad.CA) string {
	if len(cas) == 0 {
		return "none"
	}
	names := make([]string, len(cas))
	for i, c := range cas {
		names[i] = c.Name
	}
	return strings.Join(names, ", ")
}
