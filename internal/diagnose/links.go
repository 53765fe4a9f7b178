package diagnose

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/linkrate"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/nodename"
)

// linksCheck looks at every link whose two ends the sweep read: ports
// the SM has not finished with, ends that disagree, a link set up below
// what its ends can do, and below what the operator expects.
type linksCheck struct{}

func (linksCheck) Name() string { return "links" }

func (linksCheck) Codes() []CodeInfo {
	return append([]CodeInfo{
		{"links.port_init", Error, "a linked port is in Init: the link is up but the SM has not configured it, it carries no data"},
		{"links.port_armed", Error, "a linked port is in Armed: configured but not activated, it carries no data"},
		{"links.ends_disagree", Error, "the two ends of a link report a different active width or speed"},
		{"links.mtu_below_capability", Warning, "the link's MTU is below the MTU both ends support"},
		{"links.vls_below_capability", Warning, "the link's operational data VLs are fewer than both ends support"},
		{"links.below_expected_width", Error, "the link runs narrower than --expect-width"},
		{"links.below_expected_speed", Error, "the link runs slower than --expect-speed"},
	}, capabilityCodes...)
}

// link is one link, both ends read: a the end findings about the link as
// a whole are placed at (the host's end when there is one).
type link struct {
	a, b       *discovery.Port
	ai, bi     *mad.PortInfo
	arate      linkrate.Rate
	brate      linkrate.Rate
	bothActive bool
}

// linkRule is one rule over a link. The rules run in the order of
// linkRules; a new rule about links is one more entry.
type linkRule func(l *link, cfg *Config) []Finding

var linkRules = []linkRule{portStates, endsDisagree, mtuBelowCapability, vlsBelowCapability, belowExpected}

func (linksCheck) Run(s *Snapshot, cfg *Config) ([]Finding, string) {
	var out []Finding
	ls := links(s.Fabric)
	rules := append(slices.Clip(linkRules), capabilityRule(ls))
	for _, l := range ls {
		for _, rule := range rules {
			out = append(out, rule(l, cfg)...)
		}
	}
	return out, ""
}

// links are the fabric's links whose ends both have a PortInfo, each once.
func links(f *discovery.Fabric) []*link {
	var out []*link
	info := infoCache()
	for _, p := range sortedPorts(f, func(p *discovery.Port) bool {
		return p.Remote != nil && portLess(p, p.Remote) && len(p.PortInfo) > 0 && len(p.Remote.PortInfo) > 0
	}) {
		a, b := hostFirst(p, p.Remote)
		arate, brate := linkrate.With(a, info), linkrate.With(b, info)
		l := &link{a: a, b: b, ai: arate.PI, bi: brate.PI, arate: arate, brate: brate}
		l.bothActive = l.ai.PortState == mad.PortStateActive && l.bi.PortState == mad.PortStateActive
		out = append(out, l)
	}
	return out
}

// infoCache decodes each port's PortInfo once: a switch's port 0 is
// read for every one of its links.
func infoCache() func(*discovery.Port) *mad.PortInfo {
	infos := map[*discovery.Port]*mad.PortInfo{}
	return func(p *discovery.Port) *mad.PortInfo {
		pi, ok := infos[p]
		if !ok {
			pi = p.Info()
			infos[p] = pi
		}
		return pi
	}
}

// hostFirst orders the ends of a link as findings about it are placed:
// at a CA's or router's end when it has one (the host an operator knows
// by name), else at the lesser node GUID.
func hostFirst(a, b *discovery.Port) (*discovery.Port, *discovery.Port) {
	aHost, bHost := a.Node.Type != discovery.NodeSwitch, b.Node.Type != discovery.NodeSwitch
	if bHost && !aHost || aHost == bHost && portLess(b, a) {
		return b, a
	}
	return a, b
}

// finding is a finding about the link as a whole, at its a end.
func (l *link) finding(f Finding, names *nodename.Map) Finding { return atPort(f, l.a, names) }

// portStates reports each end left in Init or Armed.
func portStates(l *link, cfg *Config) []Finding {
	var out []Finding
	for _, end := range []struct {
		p  *discovery.Port
		pi *mad.PortInfo
	}{{l.a, l.ai}, {l.b, l.bi}} {
		code := ""
		switch end.pi.PortState {
		case mad.PortStateInit:
			code = "links.port_init"
		case mad.PortStateArmed:
			code = "links.port_armed"
		default:
			continue
		}
		out = append(out, atPort(Finding{Code: code, Severity: Error,
			Message: fmt.Sprintf("the port is in state %s, physical state %s: the SM has not made it Active",
				end.pi.PortState, end.pi.PortPhysicalState),
			Evidence: []Field{{"state", uint8(end.pi.PortState)}, {"state_text", end.pi.PortState.String()},
				{"physical_state", uint8(end.pi.PortPhysicalState)}, {"physical_state_text", end.pi.PortPhysicalState.String()}}},
			end.p, cfg.Names))
	}
	return out
}

// rateEvidence is the rates of both ends as evidence.
func (l *link) rateEvidence() []Field {
	return []Field{{"rate", l.arate.JSONRate()}, {"remote_rate", l.brate.JSONRate()}}
}

// endsDisagree: a link has one width and one speed; ends that report
// different ones have a fault (or one end's PortInfo is stale).
func endsDisagree(l *link, cfg *Config) []Finding {
	aw, bw := l.arate.CompatWidth(), l.brate.CompatWidth()
	as, bs := l.arate.CompatSpeed(), l.brate.CompatSpeed()
	if as == "???" || bs == "???" {
		as, bs = "", "" // a switch without port 0 has no speed to compare
	}
	if aw == bw && as == bs {
		return nil
	}
	return []Finding{l.finding(Finding{Code: "links.ends_disagree", Severity: Error,
		Message:  fmt.Sprintf("this end runs at %s%s, the other at %s%s", aw, as, bw, bs),
		Evidence: l.rateEvidence()}, cfg.Names)}
}

// mtuBytes is an MTU code's size (IBA 14.2.5.6: 1 is 256 bytes, 5 4096).
func mtuBytes(m mad.MTU) int {
	if m < 1 || m > 5 {
		return 0
	}
	return 128 << m
}

// mtuBelowCapability: the SM sets a link's MTU (NeighborMTU at each end);
// below what both ends support it wastes bandwidth on headers.
func mtuBelowCapability(l *link, cfg *Config) []Finding {
	if !l.bothActive {
		return nil
	}
	active := min(l.ai.NeighborMTU, l.bi.NeighborMTU)
	capable := min(l.ai.MTUCap, l.bi.MTUCap)
	if active == 0 || active >= capable {
		return nil
	}
	return []Finding{l.finding(Finding{Code: "links.mtu_below_capability", Severity: Warning,
		Message:  fmt.Sprintf("MTU %d, both ends support %d", mtuBytes(active), mtuBytes(capable)),
		Evidence: []Field{{"active_mtu_bytes", mtuBytes(active)}, {"supported_mtu_bytes", mtuBytes(capable)}}}, cfg.Names)}
}

// dataVLs is how many data VLs a VLCap or OperationalVLs code means
// (1: VL0, 2: VL0-1, 3: VL0-3, 4: VL0-7, 5: VL0-14).
func dataVLs(code uint8) int {
	switch code {
	case 1, 2, 3, 4:
		return 1 << (code - 1)
	case 5:
		return 15
	}
	return 0
}

// vlsBelowCapability: fewer operational VLs than both ends have leave
// QoS and deadlock-free routing engines fewer lanes to use.
func vlsBelowCapability(l *link, cfg *Config) []Finding {
	if !l.bothActive {
		return nil
	}
	active := min(dataVLs(uint8(l.ai.OperationalVLs)), dataVLs(uint8(l.bi.OperationalVLs)))
	capable := min(dataVLs(uint8(l.ai.VLCap)), dataVLs(uint8(l.bi.VLCap)))
	if active == 0 || active >= capable {
		return nil
	}
	return []Finding{l.finding(Finding{Code: "links.vls_below_capability", Severity: Warning,
		Message:  fmt.Sprintf("%d operational data VLs, both ends support %d", active, capable),
		Evidence: []Field{{"operational_vls", active}, {"supported_vls", capable}}}, cfg.Names)}
}

// belowExpected compares each link with --expect-width and
// --expect-speed.
func belowExpected(l *link, cfg *Config) []Finding {
	var out []Finding
	if cfg.ExpectWidth != "" {
		w := l.arate.CompatWidth()
		if lanes(w) < lanes(cfg.ExpectWidth) {
			out = append(out, l.finding(Finding{Code: "links.below_expected_width", Severity: Error,
				Message:  fmt.Sprintf("the link runs at %s, expected at least %s", strings.ToUpper(w), cfg.ExpectWidth),
				Evidence: append(l.rateEvidence(), Field{"expected_width", cfg.ExpectWidth})}, cfg.Names))
		}
	}
	if cfg.ExpectSpeed != "" {
		s := l.arate.CompatSpeed()
		if speedRank(s) < speedRank(cfg.ExpectSpeed) {
			out = append(out, l.finding(Finding{Code: "links.below_expected_speed", Severity: Error,
				Message:  fmt.Sprintf("the link runs at %s, expected at least %s", s, cfg.ExpectSpeed),
				Evidence: append(l.rateEvidence(), Field{"expected_speed_text", cfg.ExpectSpeed})}, cfg.Names))
		}
	}
	return out
}

// lanes is the number of lanes of a width ("4x", "4X", "4"), 0 if unknown.
func lanes(w string) int {
	n, err := strconv.Atoi(strings.TrimSuffix(strings.ToLower(w), "x"))
	if err != nil {
		return 0
	}
	return n
}

// speeds are the lane speeds by their names as ibnetdiscover prints them,
// slowest first.
var speeds = []string{"SDR", "DDR", "QDR", "FDR10", "FDR", "EDR", "HDR", "NDR", "XDR"}

// speedRank orders speed names, 0 for an unknown one.
func speedRank(s string) int {
	for i, name := range speeds {
		if strings.EqualFold(s, name) {
			return i + 1
		}
	}
	return 0
}

// ParseWidth checks an --expect-width: "1X", "2X", "4X", "8X" or "12X"
// (any case, the X optional); it returns the vocabulary's spelling.
func ParseWidth(s string) (string, error) {
	switch n := lanes(s); n {
	case 1, 2, 4, 8, 12:
		return strconv.Itoa(n) + "X", nil
	}
	return "", fmt.Errorf("invalid width %q: 1X, 2X, 4X, 8X or 12X", s)
}

// ParseSpeed checks an --expect-speed: a lane speed's name (SDR ... XDR,
// FDR10), any case; it returns ibnetdiscover's spelling.
func ParseSpeed(s string) (string, error) {
	if r := speedRank(s); r > 0 {
		return speeds[r-1], nil
	}
	return "", fmt.Errorf("invalid speed %q: one of %s", s, strings.Join(speeds, ", "))
}
