package diagnose

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/ibtool/ibtool/internal/counters"
	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/nodename"
)

// CodeInfo is one finding code a check may emit: the code, stable once
// released, its severity and what it means (docs/diagnose.md lists them).
type CodeInfo struct {
	Code     string
	Severity Severity
	Meaning  string
}

// Check is one family of checks over a snapshot.
type Check interface {
	// Name is the check's name, the prefix of its codes ("links").
	Name() string
	// Codes are the codes the check may emit.
	Codes() []CodeInfo
	// Run returns the check's findings, or why it did not run ("" when
	// it ran): it needs something the snapshot or the configuration
	// does not have.
	Run(s *Snapshot, cfg *Config) (findings []Finding, skipped string)
}

// Config is what the checks are told besides what the sweep read: the
// operator's expectations. An --output-dir keeps it with the snapshot, so
// that --load judges by the same.
type Config struct {
	// ExpectWidth and ExpectSpeed are the least every link should run
	// at ("4X", "EDR"); empty for no expectation.
	ExpectWidth string
	ExpectSpeed string
	// Expected is the fabric as it was (--expect), nil for none.
	Expected *Expected
	// Names names nodes (the node-name-map); nil for NodeDescriptions.
	Names *nodename.Map

	// Thresholds are the counters check's limits (--threshold-file);
	// nil for counters.Defaults(counters.Diagnose).
	Thresholds *counters.Thresholds
}

// Checks are the checks a diagnosis runs, in the order they are
// reported.
func Checks() []Check {
	return []Check{walkCheck{}, idsCheck{}, smCheck{}, nodesCheck{}, linksCheck{}, countersCheck{}, pkeysCheck{}, topologyCheck{},
		routingCheck{}, creditLoopsCheck{}, multicastCheck{}}
}

// CheckSummary is what one check found, counted.
type CheckSummary struct {
	Check    string `json:"check"`
	Errors   int    `json:"errors"`
	Warnings int    `json:"warnings"`
	Infos    int    `json:"infos"`
	// Skipped says why the check did not run; empty when it ran.
	Skipped string `json:"skipped,omitempty"`
}

// FabricSummary counts what the sweep saw.
type FabricSummary struct {
	Nodes    int `json:"nodes"`
	Switches int `json:"switches"`
	CAs      int `json:"cas"`
	Routers  int `json:"routers"`
	Links    int `json:"links"`
}

// Report is a diagnosis: the summary and every finding, in a fixed order.
type Report struct {
	// Complete is false when the sweep could not read everything: the
	// checks judged what there was (the walk check lists what was not).
	Complete bool           `json:"complete"`
	Fabric   FabricSummary  `json:"fabric"`
	Summary  []CheckSummary `json:"summary"`
	Findings []*Finding     `json:"findings"`
}

// Errors counts the error findings; with warnings, the warnings too.
func (r *Report) Errors(warnings bool) int {
	n := 0
	for _, f := range r.Findings {
		if f.Severity == Error || (warnings && f.Severity == Warning) {
			n++
		}
	}
	return n
}

// Run runs the checks on a snapshot and orders their findings: by check
// (in the order given), severity, code, place and message, so that the
// same snapshot always gives the same report.
func Run(s *Snapshot, cfg *Config, checks []Check) *Report {
	if cfg == nil {
		cfg = &Config{}
	}
	r := &Report{Complete: s.Complete(), Fabric: summarize(s.Fabric), Findings: []*Finding{}}
	order := map[string]int{}
	for i, c := range checks {
		order[c.Name()] = i
		found, skipped := c.Run(s, cfg)
		sum := CheckSummary{Check: c.Name(), Skipped: skipped}
		for i := range found {
			f := &found[i]
			f.Check = c.Name()
			switch f.Severity {
			case Error:
				sum.Errors++
			case Warning:
				sum.Warnings++
			default:
				sum.Infos++
			}
			r.Findings = append(r.Findings, f)
		}
		r.Summary = append(r.Summary, sum)
	}
	slices.SortStableFunc(r.Findings, func(a, b *Finding) int {
		return cmp.Or(
			cmp.Compare(order[a.Check], order[b.Check]),
			cmp.Compare(a.Severity, b.Severity),
			strings.Compare(a.Code, b.Code),
			comparePlaces(a, b),
			strings.Compare(a.Message, b.Message),
		)
	})
	return r
}

// comparePlaces orders findings by node GUID and port (fabric-wide
// findings first), then by the far end.
func comparePlaces(a, b *Finding) int {
	key := func(f *Finding) (bool, uint64, int, uint64, int) {
		var g uint64
		p := NoPort
		if f.At != nil {
			g, p = f.At.NodeGUID, f.At.Port
		}
		var rg uint64
		rp := NoPort
		if f.Remote != nil {
			rg, rp = uint64(f.Remote.NodeGUID), f.Remote.Port
		}
		return f.At != nil, g, p, rg, rp
	}
	ah, ag, ap, arg, arp := key(a)
	bh, bg, bp, brg, brp := key(b)
	if ah != bh {
		if !ah {
			return -1
		}
		return 1
	}
	return cmp.Or(cmp.Compare(ag, bg), cmp.Compare(ap, bp), cmp.Compare(arg, brg), cmp.Compare(arp, brp))
}

func summarize(f *discovery.Fabric) FabricSummary {
	var s FabricSummary
	if f == nil {
		return s
	}
	for _, n := range f.Nodes {
		s.Nodes++
		switch n.Type {
		case discovery.NodeSwitch:
			s.Switches++
		case discovery.NodeCA:
			s.CAs++
		case discovery.NodeRouter:
			s.Routers++
		}
		for _, p := range n.Ports {
			if p != nil && p.Remote != nil && portLess(p, p.Remote) {
				s.Links++
			}
		}
	}
	return s
}

// portLess orders ports by node GUID and number: a link is visited once,
// from its lesser end.
func portLess(a, b *discovery.Port) bool {
	if a.Node.GUID != b.Node.GUID {
		return a.Node.GUID < b.Node.GUID
	}
	return a.Num < b.Num
}

// CheckCodes verifies that a check's codes are its own ("<name>.<what>"),
// unique, and that each finding it made is one of them with the declared
// severity: the rules that keep codes stable. Tests call it.
func CheckCodes(c Check, found []Finding) error {
	known := map[string]Severity{}
	for _, ci := range c.Codes() {
		if !strings.HasPrefix(ci.Code, c.Name()+".") {
			return fmt.Errorf("%s: code %s is not %s.<what>", c.Name(), ci.Code, c.Name())
		}
		if _, dup := known[ci.Code]; dup {
			return fmt.Errorf("%s: code %s declared twice", c.Name(), ci.Code)
		}
		known[ci.Code] = ci.Severity
	}
	for _, f := range found {
		sev, ok := known[f.Code]
		if !ok {
			return fmt.Errorf("%s: finding with undeclared code %s", c.Name(), f.Code)
		}
		if sev != f.Severity {
			return fmt.Errorf("%s: %s is declared %s, found as %s", c.Name(), f.Code, sev, f.Severity)
		}
	}
	return nil
}
