package main

import (
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"
	"time"
)

// report collects every table of a bench run.
type report struct {
	started   time.Time
	cfg       config
	rows      []row
	floors    []floorRow
	scaling   []scaleRow
	exporters []exporterRow
	diag      []diagRow    // -diagnose: the sweep against the C sequence
	offline   []offlineRow // -diagnose: diagnose --load of a big fabric
}

type floorRow struct {
	fabric     string
	madsPerSec float64
	// pmaMadsPerSec is the floor of PerfMgt MADs routed by LID to every
	// PMA (pmaFloor); 0 when not measured.
	pmaMadsPerSec float64
}

// scaleRow is ibtool's ibnetdiscover at no added latency on one fabric.
type scaleRow struct {
	fabric    string
	nodes     int
	ours      []sample
	checked   bool
	identical bool
	note      string
}

func scaleFromRow(r row, nodes int) scaleRow {
	return scaleRow{fabric: r.fabric, nodes: nodes, ours: r.samples[ours], checked: true, identical: r.identical() == "yes"}
}

func (rep *report) markdown() string {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	p("Measured %s on %s in %.0f min; load average %s at the end (other work shared the machine: compare the ratios, which alternate the tools run by run, more than the absolute times).\n",
		rep.started.UTC().Format("2006-01-02 15:04 UTC"), hostInfo(), time.Since(rep.started).Minutes(), loadAverage())
	p("Each cell: median wall time over %d runs per tool (the C default, which waits a round trip every 2 MADs: %d runs at 100 us, %d at 1 ms), and the range (fastest-slowest). ",
		rep.cfg.runs, rep.cfg.cDefaultRuns(100*time.Microsecond), rep.cfg.cDefaultRuns(time.Millisecond))
	p("Latency is one way, added by the relay to every MAD in each direction")
	if rep.cfg.service > 0 {
		p(", plus %v of service time per request at each SMA", rep.cfg.service)
	}
	p(".\n\n")

	p("| fabric | command | latency | C default | C -o 32 | ibtool | C default / ibtool | C -o 32 / ibtool | identical output |\n")
	p("|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rep.rows {
		p("| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", r.fabric, r.cmdLabel(), latencyLabel(r.latency),
			r.wallCell(cDefault), r.wallCell(cO32), r.wallCell(ours), r.ratio(cDefault), r.ratio(cO32), r.identical())
	}
	for _, r := range rep.rows {
		if r.crashes > 0 {
			p("\n%s, %s at %s: %d C runs were killed by a signal and run again (the C ibqueryerrors's crash on ibsim's truncated PathRecord table).\n",
				r.fabric, r.cmdLabel(), latencyLabel(r.latency), r.crashes)
		}
	}
	for _, r := range rep.rows {
		if r.relayLate > 0 {
			p("\n%s at %s: the relay sent MADs %s late on average (the host's scheduling: the latency asked for is a floor), and took %s of CPU per packet it passed, request or reply (on the cores ibsim and the tools use; more per packet where few are in flight).\n",
				r.fabric, latencyLabel(r.latency), durationText(r.relayLate.Round(time.Microsecond)), durationText(r.relayCPU.Round(100*time.Nanosecond)))
		}
	}
	p("\nPeak memory (GNU time's maximum RSS, median) and MADs sent (the change of the host port's PortXmitPkts, median), at no added latency:\n\n")
	p("| fabric | command | C peak RSS | C -o 32 peak RSS | ibtool peak RSS | ibtool / C | C MADs | ibtool MADs |\n")
	p("|---|---|---|---|---|---|---|---|\n")
	for _, r := range rep.rows {
		if r.latency != 0 {
			continue
		}
		c, o := median(r.samples[cDefault], rss), median(r.samples[ours], rss)
		p("| %s | %s | %s | %s | %s | %s | %s | %s |\n", r.fabric, r.cmdLabel(), mb(c), mb(median(r.samples[cO32], rss)), mb(o),
			ratioText(o, c), count(median(r.samples[cDefault], mads)), count(median(r.samples[ours], mads)))
	}
	if len(rep.floors) > 0 {
		p("\nThe simulator floor: ibsim's MAD rate with %d DR SMPs kept in flight by a client that does nothing else (median of %d runs of %d MADs), and the time a command's MADs take at that rate. ibtool / floor is ibtool's median over that time (1.0 would be ibsim saturated throughout).\n\n",
			floorWindow, floorTries, floorMADs)
		p("| fabric | floor | command | ibtool MADs | floor time | ibtool median | ibtool / floor |\n")
		p("|---|---|---|---|---|---|---|\n")
		for _, f := range rep.floors {
			for _, r := range rep.rows {
				if r.fabric != f.fabric || r.latency != 0 || f.madsPerSec == 0 {
					continue
				}
				m := median(r.samples[ours], mads)
				floorTime := m / f.madsPerSec
				om := median(r.samples[ours], wall)
				p("| %s | %.0f MADs/s | %s | %s | %.3f s | %.3f s | %.2fx |\n", f.fabric, f.madsPerSec, r.cmdLabel(), count(m), floorTime, om, om/floorTime)
			}
		}
	}
	b.WriteString(exporterTable(rep.exporters))
	rep.pmaTable(p)
	if len(rep.scaling) > 0 {
		p("\nScaling: ibtool ibnetdiscover at no added latency (medians; the output compared with the C tool's at -o 32).\n\n")
		p("| fabric | nodes | wall time | per 1000 nodes | peak RSS | per 1000 nodes | MADs | identical output |\n")
		p("|---|---|---|---|---|---|---|---|\n")
		for _, s := range rep.scaling {
			w, r := median(s.ours, wall), median(s.ours, rss)
			k := float64(s.nodes) / 1000
			ident := "no"
			if s.identical {
				ident = "yes"
			}
			if s.note != "" {
				ident += " (" + s.note + ")"
			}
			p("| %s | %d | %.3f s | %.3f s | %s | %.1f MB | %s | %s |\n", s.fabric, s.nodes, w, w/k, mb(r), r/1024/k, count(median(s.ours, mads)), ident)
		}
	}
	return b.String()
}

// pmaTable sets ibqueryerrors' PMA phase (from ibtool's --stats) against
// the simulator floor: the phase's own rate, and the whole run's, which
// is the one to compare when the phase overlaps the walk.
func (rep *report) pmaTable(p func(string, ...any)) {
	var lines []string
	for _, r := range rep.rows {
		fl := rep.floorOf(r.fabric)
		floor := fl.madsPerSec
		ss := r.samples[ours]
		if !r.cmd.stats || r.latency != 0 || len(ss) == 0 || !ss[0].pma.ok || floor == 0 {
			continue
		}
		pmaMADs, pmaRate := median(ss, func(s sample) float64 { return float64(s.pma.mads) }), median(ss, func(s sample) float64 { return s.pma.rate })
		allRate := median(ss, func(s sample) float64 { return s.pma.allRate })
		overPMA := "-"
		if fl.pmaMadsPerSec > 0 {
			overPMA = fmt.Sprintf("%.0f MADs/s: %.2f", fl.pmaMadsPerSec, pmaRate/fl.pmaMadsPerSec)
		}
		lines = append(lines, fmt.Sprintf("| %s | %s | %s | %.0f MADs/s | %.2f | %s | %.0f MADs/s | %.2f |\n", r.fabric, r.cmdLabel(),
			count(pmaMADs), pmaRate, pmaRate/floor, overPMA, allRate, allRate/floor))
	}
	if len(lines) == 0 {
		return
	}
	p("\nibqueryerrors' PMA phase, from ibtool's --stats (medians): its MADs (ClassPortInfo and counter reads, after the fabric is walked or loaded) and their rate; then every MAD of the run (walk, SA and PMA) over the run's time. Each rate is also given over the simulator floor (1.00: ibsim saturated), and the PMA phase's over the PMA floor: ibsim's rate for PerfMgt PortCounters Gets routed by LID to every PMA, %d in flight, by a client that does nothing else (median of %d runs of %d MADs).\n\n",
		floorWindow, floorTries, floorMADs)
	p("| fabric | command | PMA MADs | PMA phase rate | / floor | PMA floor: / it | run rate | / floor |\n")
	p("|---|---|---|---|---|---|---|---|\n")
	for _, l := range lines {
		p("%s", l)
	}
}

// floorOf is the floors measured on a fabric, zero if none.
func (rep *report) floorOf(fabric string) floorRow {
	for _, f := range rep.floors {
		if f.fabric == fabric {
			return f
		}
	}
	return floorRow{}
}

func (r row) cmdLabel() string {
	if r.cmd.differs {
		return fmt.Sprintf("%s (C: %s)", r.cmd.name, strings.Join(r.cmd.c, " "))
	}
	return r.cmd.name
}

func latencyLabel(d time.Duration) string {
	if d == 0 {
		return "none"
	}
	return durationText(d)
}

// durationText is a duration as the tables write it: "100 us", "1 ms".
func durationText(d time.Duration) string {
	t := d.String()
	for _, unit := range []string{"µs", "ms", "ns"} {
		if strings.HasSuffix(t, unit) {
			return strings.TrimSuffix(t, unit) + " " + strings.Replace(unit, "µ", "u", 1)
		}
	}
	return t
}

// failure is the first failed run of a tool, if any.
func (r row) failure(tool int) string {
	for _, s := range r.samples[tool] {
		if s.failed != "" {
			return s.failed
		}
	}
	return ""
}

func (r row) wallCell(tool int) string {
	ss := r.samples[tool]
	if len(ss) == 0 {
		return "-"
	}
	if f := r.failure(tool); f != "" {
		return "failed: " + strings.ReplaceAll(f, "|", "/")
	}
	v := values(ss, wall)
	cell := fmt.Sprintf("%.3f s (%.3f-%.3f)", v[len(v)/2], v[0], v[len(v)-1])
	if len(ss) != r.runsOf(ours) {
		cell += fmt.Sprintf(" %d runs", len(ss))
	}
	return cell
}

func (r row) runsOf(tool int) int { return len(r.samples[tool]) }

// ratio is a C tool's median over ibtool's: how many times faster ibtool is.
func (r row) ratio(tool int) string {
	if len(r.samples[tool]) == 0 || r.failure(tool) != "" || r.failure(ours) != "" {
		return "-"
	}
	return fmt.Sprintf("%.1fx", median(r.samples[tool], wall)/median(r.samples[ours], wall))
}

// identical says whether every run of every tool printed the same.
func (r row) identical() string {
	if r.cmd.differs {
		return "n/a (other tool)"
	}
	var want *[32]byte
	for _, t := range []int{ours, cDefault, cO32} {
		for _, s := range r.samples[t] {
			if s.failed != "" {
				return "failed"
			}
			if want == nil {
				want = &s.output
			}
			if s.output != *want {
				return "no"
			}
		}
	}
	return "yes"
}

func (r row) summary() string {
	return fmt.Sprintf("%s %s at %s: C %s, C -o 32 %s, ibtool %s, identical %s", r.fabric, r.cmdLabel(), latencyLabel(r.latency),
		r.wallCell(cDefault), r.wallCell(cO32), r.wallCell(ours), r.identical())
}

func wall(s sample) float64 { return s.wall.Seconds() }
func rss(s sample) float64  { return float64(s.rssKB) }
func mads(s sample) float64 { return float64(s.mads) }

// values are f of each of ss, sorted.
func values[T any](ss []T, f func(T) float64) []float64 {
	v := make([]float64, len(ss))
	for i, s := range ss {
		v[i] = f(s)
	}
	sort.Float64s(v)
	return v
}

// median is the median of f over ss (the upper one of an even count).
func median[T any](ss []T, f func(T) float64) float64 {
	if len(ss) == 0 {
		return 0
	}
	v := values(ss, f)
	return v[len(v)/2]
}

func mb(kb float64) string {
	if kb == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f MB", kb/1024)
}

func ratioText(a, b float64) string {
	if a == 0 || b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1fx", a/b)
}

func count(v float64) string { return fmt.Sprintf("%.0f", v) }

func hostInfo() string {
	out, _ := exec.Command("uname", "-srm").Output()
	n, _ := exec.Command("nproc").Output()
	return fmt.Sprintf("%s cores, %s", strings.TrimSpace(string(n)), strings.TrimSpace(string(out)))
}

func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	return strings.Join(f[:3], " ")
}
