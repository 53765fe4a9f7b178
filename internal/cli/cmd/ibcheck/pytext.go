package ibcheck

// python-rdma's texts: how libibtool/errors.py and IBA_describe word a
// finding of internal/health and the values in it.

import (
	"fmt"
	"strings"

	"github.com/ibtool/ibtool/internal/counters"
	"github.com/ibtool/ibtool/internal/health"
	"github.com/ibtool/ibtool/internal/mad"
)

// where is the place every message of a check of p ends with: "lid 2
// port 3", "lid 2 all ports".
func where(p *health.Port) string { return fmt.Sprintf("lid %d %s", p.EndLID, selectText(p.Num)) }

func selectText(port int) string {
	if port == counters.AllPortSelect {
		return "all ports"
	}
	return fmt.Sprintf("port %d", port)
}

// findingText is python-rdma's check(): "<field> is '<value>', <relation>
// '<want>': <where>".
func findingText(f health.Finding, p *health.Port) string {
	relation := map[health.Rule]string{health.Equal: "expected", health.NonZero: "but shouldn't be", health.AtMost: "expected less than"}[f.Rule]
	return fmt.Sprintf("%s is '%s', %s '%s': %s", counters.PyName(f.Field), pyValue(f.Field, f.Got), relation, pyValue(f.Field, f.Want), where(p))
}

// pyValue is python-rdma's text of a value of field.
func pyValue(field string, v uint64) string {
	switch field {
	case "PortPhysicalState":
		return pyPhysState(mad.PhysPortState(v))
	case "PortState":
		return pyPortState(mad.PortState(v))
	case "LinkWidthActive":
		return pyWidth(uint8(v))
	case "LinkSpeedActive":
		return pySpeed(uint8(v))
	}
	return fmt.Sprint(v)
}

// widthLanes are the lanes of a LinkWidth bit (IBA 14.2.5.6), 0 for
// none. A switch, not a map: a package-level map is built at every start.
func widthLanes(bit uint8) int {
	switch bit {
	case 1:
		return 1
	case 2:
		return 4
	case 4:
		return 8
	case 8:
		return 12
	case 16:
		return 2
	}
	return 0
}

// pyWidth is python-rdma's text of a width: its lanes and "x" ("4x"; "0x"
// for a value that is not one width).
func pyWidth(v uint8) string { return fmt.Sprintf("%dx", widthLanes(v)) }

// pySpeed is python-rdma's text of a link speed set (SDR, DDR, QDR).
func pySpeed(v uint8) string {
	var names []string
	for _, s := range []struct {
		bit  uint8
		name string
	}{{1, "SDR"}, {2, "DDR"}, {4, "QDR"}} {
		if v&s.bit != 0 {
			names = append(names, s.name)
		}
	}
	return strings.Join(names, ",")
}

// pyPhysState and pyPortState are python-rdma's texts of the port states.
func pyPhysState(v mad.PhysPortState) string {
	names := []string{1: "Sleep", 2: "Polling", 3: "Disabled", 4: "Config.Train", 5: "Link UP", 6: "Error Recovery", 7: "Phy Test"}
	if int(v) < len(names) && names[v] != "" {
		return names[v]
	}
	return fmt.Sprintf("?? %d", v)
}

func pyPortState(v mad.PortState) string {
	names := []string{1: "Down", 2: "Init", 3: "Armed", 4: "Active"}
	if int(v) < len(names) && names[v] != "" {
		return names[v]
	}
	return fmt.Sprintf("?? %d", v)
}

// pyNodeType is python-rdma's text of a node type.
func pyNodeType(t mad.NodeType) string {
	switch t {
	case mad.NodeTypeCA:
		return "Channel Adapter"
	case mad.NodeTypeSwitch:
		return "Switch"
	case mad.NodeTypeRouter:
		return "Router"
	}
	return fmt.Sprintf("?? %d", t)
}

// pyGUID is python-rdma's text of a GUID: four colon-separated groups.
func pyGUID(g uint64) string {
	return fmt.Sprintf("%04x:%04x:%04x:%04x", g>>48, g>>32&0xffff, g>>16&0xffff, g&0xffff)
}

// nodeFindingText is python-rdma's words for a node the SA disagrees
// with.
func nodeFindingText(f *health.NodeFinding) string {
	switch f.Problem {
	case health.NoPath:
		return "SA could not find a path for " + pyGUID(f.PortGUID)
	case health.PathElsewhere:
		return fmt.Sprintf("SA and SMP NodeInfo's differ: the SA's path to %s ends at lid %d, the port has lid %d", pyGUID(f.PortGUID), f.SALID, f.PortLID)
	}
	return fmt.Sprintf("SA and SMP NodeInfo's differ %s != %s", pyGUID(f.PortGUID), pyGUID(f.SAGUID))
}
