package diagnose

import (
	"fmt"
	"strings"

	"github.com/ibtool/ibtool/internal/discovery"
)

// pkeysCheck compares, on every link into a switch port that enforces
// partitions, the host's P_Key table with the switch port's (ibdiagnet's
// PKeys stage): a switch port that enforces drops the packets of a
// partition its table lacks (IBA 10.9.3), so a host member of it there
// cannot use it; where the switch port has only a limited membership,
// the host's full one is limited too (two limited members do not talk).
type pkeysCheck struct{}

func (pkeysCheck) Name() string { return "pkeys" }

func (pkeysCheck) Codes() []CodeInfo {
	return []CodeInfo{
		{"pkeys.missing_at_switch", Error, "a P_Key of the host port is not in its switch port's table, which enforces partitions: the host's traffic in those partitions is dropped"},
		{"pkeys.limited_at_switch", Warning, "the host port is a full member of partitions its switch port holds as a limited member only: it cannot reach their limited members"},
		{"pkeys.enforcement_one_way", Warning, "the switch port enforces partitions inbound but not outbound, or the reverse"},
	}
}

// pkeyFull is the membership bit of a P_Key (1: full member); the other
// 15 bits are the partition (IBA 10.9.1).
const pkeyFull = 0x8000

func (pkeysCheck) Run(s *Snapshot, cfg *Config) ([]Finding, string) {
	if len(s.PKeys) == 0 {
		return nil, "no switch port enforces partitions"
	}
	tables := map[*discovery.Port]*PKeyRead{}
	for i := range s.PKeys {
		tables[s.PKeys[i].Port] = &s.PKeys[i]
	}
	var out []Finding
	for i := range s.PKeys {
		sw := &s.PKeys[i]
		p := sw.Port
		if p.Node.Type != discovery.NodeSwitch || p.Remote == nil {
			continue
		}
		host := tables[p.Remote]
		if pi := p.Info(); (pi.PartitionEnforcementInbound != 0) != (pi.PartitionEnforcementOutbound != 0) {
			out = append(out, atPort(Finding{Code: "pkeys.enforcement_one_way", Severity: Warning,
				Message: fmt.Sprintf("the port enforces partitions %s only", map[bool]string{true: "inbound", false: "outbound"}[pi.PartitionEnforcementInbound != 0]),
				Evidence: []Field{{"enforcement_inbound", pi.PartitionEnforcementInbound != 0},
					{"enforcement_outbound", pi.PartitionEnforcementOutbound != 0}}}, p, cfg.Names))
		}
		if sw.Err != nil || host == nil || host.Err != nil {
			continue // walk.read_failed says why
		}
		out = append(out, comparePKeys(host, sw, cfg)...)
	}
	return out, ""
}

// comparePKeys compares a host port's table with its switch port's.
func comparePKeys(host, sw *PKeyRead, cfg *Config) []Finding {
	member := map[uint16]bool{} // partition -> the switch port's membership is full
	for _, k := range sw.PKeys {
		if k&^pkeyFull != 0 {
			member[k&^pkeyFull] = member[k&^pkeyFull] || k&pkeyFull != 0
		}
	}
	var missing, limited []uint16
	seen := map[uint16]bool{}
	for _, k := range host.PKeys {
		base := k &^ pkeyFull
		if base == 0 || seen[k] {
			continue
		}
		seen[k] = true
		full, ok := member[base]
		switch {
		case !ok:
			missing = append(missing, k)
		case k&pkeyFull != 0 && !full:
			limited = append(limited, k)
		}
	}
	var out []Finding
	if len(missing) > 0 {
		out = append(out, atPort(Finding{Code: "pkeys.missing_at_switch", Severity: Error,
			Message:  fmt.Sprintf("P_Key %s not in the switch port's table, which enforces partitions", pkeyList(missing)),
			Evidence: []Field{{"pkeys", missing}}}, host.Port, cfg.Names))
	}
	if len(limited) > 0 {
		out = append(out, atPort(Finding{Code: "pkeys.limited_at_switch", Severity: Warning,
			Message:  fmt.Sprintf("full member by P_Key %s, which the switch port holds as a limited member only", pkeyList(limited)),
			Evidence: []Field{{"pkeys", limited}}}, host.Port, cfg.Names))
	}
	return out
}

func pkeyList(keys []uint16) string {
	var s []string
	for _, k := range keys {
		s = append(s, fmt.Sprintf("0x%04x", k))
	}
	return strings.Join(s, ", ")
}
