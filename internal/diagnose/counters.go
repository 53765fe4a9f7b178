package diagnose

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/ibtool/ibtool/internal/counters"
	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/linkrate"
	"github.com/ibtool/ibtool/internal/query"
)

// countersCheck judges the error counters of every linked port (those
// ibqueryerrors judges, counters.ErrorCounters): their totals against
// thresholds (ibqueryerrors' threshold file, the diagnosis' defaults),
// counters stuck at their maximum, and what rose between the sweep's two
// reads: any rise of an error counter is traffic lost now, symbol errors
// as a bit error rate. The data counters, which move with every packet
// (ibsim counts every MAD), are never judged.
type countersCheck struct{}

func (countersCheck) Name() string { return "counters" }

func (countersCheck) Codes() []CodeInfo {
	return []CodeInfo{
		{"counters.symbol_errors", Error, "symbol errors during the interval: the link's bit error rate, estimated, is above what it can measure (1/(interval x bit rate))"},
		{"counters.increasing", Error, "an error counter rose during the interval: the port loses or rejects traffic now"},
		{"counters.above_threshold", Warning, "an error counter's total (since it was last reset) is beyond its threshold"},
		{"counters.saturated", Warning, "an error counter is at its maximum: it no longer counts, rises cannot show"},
		{"counters.interval", Info, "how the counters were read: the ports, the interval and the lowest bit error rate it can show at each link rate"},
	}
}

// risingCounter tells the error counters judged by their rise during the
// interval. SymbolErrorCounter's rise is a bit error rate
// (counters.symbol_errors). Not PortXmitWait, which counts congestion
// and rises with every busy port's traffic, nor VL15Dropped: the sweep's
// own SMPs during the interval can make a busy switch drop some. (A
// switch, not a map: a package-level map is built at every start of
// ibtool, whatever command runs.)
func risingCounter(c string) bool {
	switch c {
	case "SymbolErrorCounter", "LinkErrorRecoveryCounter", "LinkDownedCounter", "PortRcvErrors",
		"PortRcvRemotePhysicalErrors", "PortRcvSwitchRelayErrors", "PortXmitDiscards",
		"PortXmitConstraintErrors", "PortRcvConstraintErrors", "LocalLinkIntegrityErrors",
		"ExcessiveBufferOverrunErrors":
		return true
	}
	return false
}

func (countersCheck) Run(s *Snapshot, cfg *Config) ([]Finding, string) {
	r := s.Counters
	if r == nil {
		return nil, "the sweep did not read counters"
	}
	th := cfg.Thresholds
	if th == nil {
		th = counters.Defaults(counters.Diagnose)
	}
	out := []Finding{intervalFinding(s)}
	for i := range r.First {
		first := &r.First[i]
		p := counterPort(s.Fabric, first)
		if first.Err != nil || p == nil {
			continue // walk.read_failed says it
		}
		var second *query.PortCounters
		if r.Second != nil && r.Second[i].Err == nil {
			second = &r.Second[i]
		}
		out = append(out, judgePort(p, first, second, r, th, cfg)...)
	}
	return out, ""
}

// counterPort is the fabric's port whose counters r are.
func counterPort(f *discovery.Fabric, r *query.PortCounters) *discovery.Port {
	if n := f.Node(r.NodeGUID); n != nil {
		return n.Port(r.Port)
	}
	return nil
}

// counterValue is counter c as read in r, and the largest value it can
// hold: the 64-bit PortCountersExtended's where the PMA has its error
// counters, PortCounters' otherwise (ibqueryerrors' choice).
func counterValue(r *query.PortCounters, c string) (v, limit uint64, bits int) {
	if r.Extended != nil && r.Caps.ExtendedErrors() {
		if v, ok := counters.ExtValue(r.Extended, c); ok {
			return v, math.MaxUint64, 64
		}
	}
	if r.Basic == nil {
		return 0, 0, 0
	}
	v, _ = counters.Value(r.Basic, c)
	bits = counters.Bits(c)
	return v, math.MaxUint64 >> (64 - bits), bits
}

// judgePort judges one port's error counters: the last read's totals,
// and what rose from the first read to the second (nil for none).
func judgePort(p *discovery.Port, first, second *query.PortCounters, r *CounterReads, th *counters.Thresholds, cfg *Config) []Finding {
	now := first
	if second != nil {
		now = second
	}
	var out []Finding
	add := func(code string, sev Severity, msg string, ev ...Field) {
		out = append(out, atPort(Finding{Code: code, Severity: sev, Message: msg, Evidence: ev}, p, cfg.Names))
	}
	for _, c := range counters.ErrorCounters {
		v, limit, bits := counterValue(now, c)
		if bits == 0 {
			continue
		}
		if th.Judged(c) && v == limit {
			add("counters.saturated", Warning,
				fmt.Sprintf("%s is at its maximum, %d (%d bits): it no longer counts, and a rise cannot show", c, v, bits),
				Field{"counter", c}, Field{"value", v}, Field{"counter_bits", bits})
		} else if threshold, beyond := th.Beyond(c, v); beyond {
			add("counters.above_threshold", Warning, fmt.Sprintf("%s is %d, beyond its threshold of %d", c, v, threshold),
				Field{"counter", c}, Field{"value", v}, Field{"threshold", threshold})
		}
		if second == nil || !risingCounter(c) {
			continue
		}
		v1, _, _ := counterValue(first, c)
		if v <= v1 {
			continue // no rise (or a reset by someone else)
		}
		rise := v - v1
		ms := r.Interval.Milliseconds()
		perSec := float64(rise) / r.Interval.Seconds()
		if c == "SymbolErrorCounter" {
			out = append(out, symbolErrors(p, rise, r, cfg))
			continue
		}
		add("counters.increasing", Error,
			fmt.Sprintf("%s rose by %d in %d ms (%.3g a second), from %d to %d", c, rise, ms, perSec, v1, v),
			Field{"counter", c}, Field{"value", v}, Field{"increase", rise}, Field{"interval_ms", ms}, Field{"increase_per_sec", perSec})
	}
	return out
}

// bitRate is a link's signalling rate in bits a second (lanes times the
// lane's rate), 0 when not known.
func bitRate(p *discovery.Port) float64 {
	r := linkrate.Of(p).JSONRate()
	var lanes int
	if _, err := fmt.Sscanf(string(r.Width), "%dX", &lanes); err != nil {
		return 0
	}
	return float64(lanes) * r.LaneSpeedGbps * 1e9
}

// symbolErrors is the finding of a port whose symbol errors rose by rise
// during the interval: the bit error rate they make, estimated as
// rise / (interval x bit rate), beside the lowest the interval can show
// (one error in it).
func symbolErrors(p *discovery.Port, rise uint64, r *CounterReads, cfg *Config) Finding {
	secs, bps := r.Interval.Seconds(), bitRate(p)
	ev := []Field{{"counter", "SymbolErrorCounter"}, {"increase", rise}, {"interval_ms", r.Interval.Milliseconds()}}
	msg := fmt.Sprintf("%d symbol errors in %d ms", rise, r.Interval.Milliseconds())
	if bps > 0 {
		ber, lowest := float64(rise)/(secs*bps), 1/(secs*bps)
		ev = append(ev, Field{"rate", linkrate.Of(p).JSONRate()}, Field{"bit_rate_gbps", bps / 1e9},
			Field{"bit_error_rate", ber}, Field{"lowest_measurable_bit_error_rate", lowest})
		msg += fmt.Sprintf(": a bit error rate of about %.1e at %s (%g Gb/s); the interval shows no rate below %.1e",
			ber, linkrate.Of(p).JSONRate().RateText, bps/1e9, lowest)
	}
	return atPort(Finding{Code: "counters.symbol_errors", Severity: Error, Message: msg, Evidence: ev}, p, cfg.Names)
}

// lowestRate is the lowest bit error rate an interval shows at one link
// rate.
type lowestRate struct {
	RateText    string  `json:"rate_text"`
	BitRateGbps float64 `json:"bit_rate_gbps"`
	Lowest      float64 `json:"lowest_bit_error_rate"`
	Ports       int     `json:"ports"`
}

// intervalFinding says how the counters were read, fabric-wide: how
// many ports, how far apart, and, for each link rate of the ports read,
// the lowest bit error rate the interval can show.
func intervalFinding(s *Snapshot) Finding {
	r := s.Counters
	read := 0
	for _, pc := range r.First {
		if pc.Err == nil {
			read++
		}
	}
	f := Finding{Code: "counters.interval", Severity: Info}
	if len(r.First) == 0 {
		f.Message = "no port's counters read: no linked port is Armed or Active with a LID"
		f.Evidence = []Field{{"ports", 0}, {"interval_ms", int64(0)}}
		return f
	}
	if r.Second == nil {
		f.Message = fmt.Sprintf("the counters of %d %s read once (an interval of 0): totals judged, no rises", read, plural(read, "port", "ports"))
		f.Evidence = []Field{{"ports", read}, {"interval_ms", int64(0)}}
		return f
	}
	byRate := map[string]*lowestRate{}
	for _, pc := range r.First {
		p := counterPort(s.Fabric, &pc)
		if pc.Err != nil || p == nil {
			continue
		}
		bps := bitRate(p)
		if bps == 0 {
			continue
		}
		text := linkrate.Of(p).JSONRate().RateText
		lr := byRate[text]
		if lr == nil {
			lr = &lowestRate{RateText: text, BitRateGbps: bps / 1e9, Lowest: 1 / (r.Interval.Seconds() * bps)}
			byRate[text] = lr
		}
		lr.Ports++
	}
	rates := make([]lowestRate, 0, len(byRate))
	var texts []string
	for _, lr := range byRate {
		rates = append(rates, *lr)
	}
	slices.SortFunc(rates, func(a, b lowestRate) int {
		return cmp.Or(cmp.Compare(b.BitRateGbps, a.BitRateGbps), strings.Compare(a.RateText, b.RateText))
	})
	for _, lr := range rates {
		texts = append(texts, fmt.Sprintf("%.1e at %s", lr.Lowest, lr.RateText))
	}
	f.Message = fmt.Sprintf("the counters of %d %s read twice, %d ms apart; the lowest bit error rate that shows: %s",
		read, plural(read, "port", "ports"), r.Interval.Milliseconds(), strings.Join(texts, ", "))
	if len(texts) == 0 {
		f.Message = fmt.Sprintf("the counters of %d %s read twice, %d ms apart", read, plural(read, "port", "ports"), r.Interval.Milliseconds())
	}
	f.Evidence = []Field{{"ports", read}, {"interval_ms", r.Interval.Milliseconds()}, {"lowest_bit_error_rates", rates}}
	return f
}
