package diagnose

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/fabricdoc"
	"github.com/ibtool/ibtool/internal/mad"
)

// smCheck looks at the subnet managers: exactly one MASTER, and every
// end port configured by it (its SM LID, the subnet prefix).
type smCheck struct{}

func (smCheck) Name() string { return "sm" }

func (smCheck) Codes() []CodeInfo {
	return []CodeInfo{
		{"sm.no_sm", Error, "no port has IsSM set: no subnet manager runs, nothing configures or reconfigures the fabric"},
		{"sm.no_master", Error, "subnet managers run, but none is MASTER"},
		{"sm.multiple_masters", Error, "more than one subnet manager says it is MASTER: they fight over the fabric's configuration"},
		{"sm.sm_lid_mismatch", Error, "an active end port's MasterSMLID is not the MASTER's LID: its traps and SA queries go elsewhere"},
		{"sm.subnet_prefix_mismatch", Error, "an active end port's GID prefix differs from the MASTER's port's (without one MASTER: from the one most ports have): its GIDs are in another subnet"},
		{"sm.sm", Info, "a subnet manager: its state, priority and activity count"},
	}
}

func (smCheck) Run(s *Snapshot, cfg *Config) ([]Finding, string) {
	if s.Source == "cache" && len(s.SMInfo) == 0 && !anySMPort(s.Fabric) {
		// A cache may be older than the SM: nothing to say without
		// an SM port in it.
		return nil, "the cache has no SM port"
	}
	var out []Finding
	var masters []SMInfoRead
	unread := 0
	for _, r := range s.SMInfo {
		if r.Err != nil {
			unread++ // the walk check reports it
			continue
		}
		out = append(out, atPort(Finding{Code: "sm.sm", Severity: Info,
			Message: fmt.Sprintf("subnet manager 0x%016x: %s, priority %d, activity count %d",
				uint64(r.Info.GUID), r.Info.SMState.String(), r.Info.Priority, r.Info.ActCount),
			Evidence: []Field{{"sm_guid", r.Info.GUID}, {"sm_state", uint8(r.Info.SMState)}, {"sm_state_text", r.Info.SMState.String()},
				{"priority", r.Info.Priority}, {"activity_count", r.Info.ActCount}}}, r.Port, cfg.Names))
		if r.Info.SMState == mad.SMStateMaster {
			masters = append(masters, r)
		}
	}
	switch {
	case len(s.SMInfo) == 0:
		out = append(out, Finding{Code: "sm.no_sm", Severity: Error,
			Message: "no port has IsSM set in its PortInfo: no subnet manager runs in this subnet"})
	case len(masters) == 0 && unread == 0:
		out = append(out, Finding{Code: "sm.no_master", Severity: Error,
			Message:  fmt.Sprintf("%d %s, none MASTER", len(s.SMInfo), plural(len(s.SMInfo), "subnet manager", "subnet managers")),
			Evidence: []Field{{"sm_ports", len(s.SMInfo)}}})
	case len(masters) > 1:
		for _, m := range masters {
			out = append(out, atPort(Finding{Code: "sm.multiple_masters", Severity: Error,
				Message:  fmt.Sprintf("one of %d subnet managers that say they are MASTER", len(masters)),
				Evidence: []Field{{"masters", len(masters)}, {"sm_guid", m.Info.GUID}}}, m.Port, cfg.Names))
		}
	}
	if len(masters) == 1 {
		out = append(out, configuredBy(s.Fabric, masters[0].Port, cfg)...)
	} else {
		out = append(out, prefixOutliers(s.Fabric, cfg)...)
	}
	return out, ""
}

func anySMPort(f *discovery.Fabric) bool {
	return len(sortedPorts(f, isSMPort)) > 0
}

// activeEndPorts are the ports an SM configures as end ports (a CA's or
// router's ports, a switch's port 0) that are Armed or Active: an SM has
// set them up.
func activeEndPorts(f *discovery.Fabric) []*discovery.Port {
	return sortedPorts(f, func(p *discovery.Port) bool {
		if len(p.PortInfo) == 0 || (p.Node.Type == discovery.NodeSwitch && p.Num != 0) {
			return false
		}
		st := p.Info().PortState
		return st == mad.PortStateArmed || st == mad.PortStateActive
	})
}

// configuredBy checks that every active end port was set up by the
// master at port m: its SM LID and its subnet prefix.
func configuredBy(f *discovery.Fabric, m *discovery.Port, cfg *Config) []Finding {
	masterLID := fabricdoc.RemoteLID(m)
	prefix := m.Info().GIDPrefix
	var out []Finding
	for _, p := range activeEndPorts(f) {
		pi := p.Info()
		if pi.MasterSMLID != masterLID {
			out = append(out, atPort(Finding{Code: "sm.sm_lid_mismatch", Severity: Error,
				Message:  fmt.Sprintf("the port's SM LID is %d, the MASTER's LID is %d", pi.MasterSMLID, masterLID),
				Evidence: []Field{{"sm_lid", pi.MasterSMLID}, {"master_lid", masterLID}}}, p, cfg.Names))
		}
		if pi.GIDPrefix != prefix {
			out = append(out, atPort(Finding{Code: "sm.subnet_prefix_mismatch", Severity: Error,
				Message:  fmt.Sprintf("the port's subnet prefix is 0x%016x, the MASTER's port's 0x%016x", pi.GIDPrefix, prefix),
				Evidence: []Field{{"subnet_prefix", fmt.Sprintf("0x%016x", pi.GIDPrefix)}, {"master_subnet_prefix", fmt.Sprintf("0x%016x", prefix)}}}, p, cfg.Names))
		}
	}
	return out
}

// prefixOutliers are, without one MASTER to go by, the active end ports
// whose subnet prefix is not the one most ports have.
func prefixOutliers(f *discovery.Fabric, cfg *Config) []Finding {
	ports := activeEndPorts(f)
	prefixes := make([]uint64, len(ports))
	for i, p := range ports {
		prefixes[i] = p.Info().GIDPrefix
	}
	common := mostCommon(prefixes)
	var out []Finding
	for i, p := range ports {
		if prefixes[i] != common {
			out = append(out, atPort(Finding{Code: "sm.subnet_prefix_mismatch", Severity: Error,
				Message:  fmt.Sprintf("the port's subnet prefix is 0x%016x, most ports' 0x%016x", prefixes[i], common),
				Evidence: []Field{{"subnet_prefix", fmt.Sprintf("0x%016x", prefixes[i])}, {"common_subnet_prefix", fmt.Sprintf("0x%016x", common)}}}, p, cfg.Names))
		}
	}
	return out
}

// mostCommon is the value most ports have (the least of equals).
func mostCommon[T cmp.Ordered](vals []T) T {
	counts := map[T]int{}
	for _, v := range vals {
		counts[v]++
	}
	keys := make([]T, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var best T
	n := -1
	for _, k := range keys {
		if counts[k] > n {
			best, n = k, counts[k]
		}
	}
	return best
}
