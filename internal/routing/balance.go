package routing

import (
	"github.com/ibtool/ibtool/internal/discovery"
)

// Through lists the end ports (of every node type) whose routes switch
// sw sends out of port: each end port once, by the lowest of its LIDs
// the table has a valid entry for (as ibroute's listing names an LMC
// range by its first LID, its other LIDs as paths of it), in LID order.
// This is what ibfindnodesusing answers, keeping the CA ports.
func (t *Tables) Through(sw uint64, port int) []*discovery.Port {
	s := t.Switches[sw]
	if s == nil || s.LFT == nil {
		return nil
	}
	owners := LIDMap(t.Fabric)
	seen := map[*discovery.Port]bool{}
	var out []*discovery.Port
	for i, e := range s.LFT.Ports {
		lid := s.LFT.First + i
		if int(e) > s.NumPorts || lid >= len(owners) || owners[lid] == nil || seen[owners[lid]] {
			continue
		}
		seen[owners[lid]] = true
		if int(e) == port {
			out = append(out, owners[lid])
		}
	}
	return out
}

// Balance is how a switch's table spreads the LIDs of CA and router
// ports over its ports (check_lft_balance's count).
type Balance struct {
	Switch *discovery.Node
	// Routes[p] is how many LIDs of CA and router ports (every LID of an
	// LMC range) the table sends out of port p.
	Routes []int
	// Hosts are the CA and router ports the table has valid entries for,
	// in the order of their first LID.
	Hosts []HostRoutes
}

// HostRoutes is how a switch routes one end port's LIDs.
type HostRoutes struct {
	Port *discovery.Port
	LIDs int     // its LIDs the table has a valid entry for
	Out  PortSet // the ports they go out of
}

// Balance is switch sw's balance; nil when its table was not read.
// Every LID the fabric has counts, whatever the state of its port: the
// count is of what the table says.
func (t *Tables) Balance(sw uint64) *Balance { return t.balance(sw, LIDMap(t.Fabric)) }

// Balances are the balances of every switch whose table was read, in
// node GUID order.
func (t *Tables) Balances() []*Balance {
	owners := LIDMap(t.Fabric)
	var out []*Balance
	for _, n := range t.Fabric.SortedByGUID() {
		if b := t.balance(n.GUID, owners); b != nil {
			out = append(out, b)
		}
	}
	return out
}

func (t *Tables) balance(sw uint64, owners []*discovery.Port) *Balance {
	s := t.Switches[sw]
	n := t.Fabric.Node(sw)
	if s == nil || s.LFT == nil || n == nil {
		return nil
	}
	b := &Balance{Switch: n, Routes: make([]int, s.NumPorts+1)}
	host := map[*discovery.Port]int{} // index in b.Hosts
	for i, e := range s.LFT.Ports {
		lid := s.LFT.First + i
		if int(e) > s.NumPorts || lid >= len(owners) || owners[lid] == nil {
			continue
		}
		p := owners[lid]
		if p.Node.Type == discovery.NodeSwitch {
			continue
		}
		b.Routes[e]++
		k, ok := host[p]
		if !ok {
			k = len(b.Hosts)
			host[p] = k
			b.Hosts = append(b.Hosts, HostRoutes{Port: p})
		}
		b.Hosts[k].LIDs++
		b.Hosts[k].Out.Add(int(e))
	}
	return b
}

// PortRoutes is the number of routes a port carries.
type PortRoutes struct{ Port, Routes int }

// Uneven is check_lft_balance's verdict on the ports it weighs (those
// that are up or carry routes, less those that lead straight to one
// host): uneven when one carries more than one route more than another.
// With heuristic (its -e), a switch with more than 12 ports in use
// (ports) is still even when the ports that carry fewer than the most
// less one, but some, are about half of them and even among themselves
// (a line board with half its ports to the spines), or when there are
// none such (a switch not fully populated).
func Uneven(weighed []PortRoutes, ports int, heuristic bool) bool {
	lo, hi := spread(weighed)
	uneven := hi > lo+1
	if !heuristic || !uneven || ports <= 12 {
		return uneven
	}
	var rest []PortRoutes
	for _, p := range weighed {
		if p.Routes != hi && p.Routes != hi-1 && p.Routes != 0 {
			rest = append(rest, p)
		}
	}
	if len(rest) == 0 {
		return false
	}
	half := ports / 2
	if len(rest) < half-1 || len(rest) > half+1 {
		return true
	}
	lo, hi = spread(rest)
	return hi > lo+1
}

// spread is the fewest and the most routes of the ports (999999 and 0
// for none, as the script starts them).
func spread(ports []PortRoutes) (lo, hi int) {
	lo = 999999
	for _, p := range ports {
		lo, hi = min(lo, p.Routes), max(hi, p.Routes)
	}
	return lo, hi
}
