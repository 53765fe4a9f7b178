package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ibtool/ibtool/internal/simfabric"
)

// The diagnose rows (-diagnose, issue D): ibtool diagnose's sweep
// against the C tools doing what they can of it, one after the other,
// on a live fabric at each latency; and the offline analysis of a big
// fabric's saved sweep (diagnose --load) in CPU seconds. Targets: the
// sweep at most a fifth of the C sequence's time without added latency,
// a twentieth at 1 ms; the offline analysis of the 10,000-node fabric
// under 1 s of CPU.

// cSequence is what the C tools can do of a diagnosis, each at its best
// setting (-o 32 where it has it): the topology and its links
// (ibnetdiscover), the error counters (ibqueryerrors), the forwarding
// tables (dump_fts), zero and duplicate LIDs and GUIDs (ibidsverify -R,
// which discovers again) and the master SM (sminfo).
var cSequence = []struct {
	tool       string
	args       []string
	errorsExit int // the exit status that reports problems found, a result
}{
	{"ibnetdiscover", []string{"-o", "32"}, 0},
	{"ibqueryerrors", []string{"-o", "32"}, 1},
	{"dump_fts", nil, 0},
	{"ibidsverify", []string{"-R"}, 1},
	{"sminfo", nil, 0},
}

// diagTargets are the sweep's targets: the C sequence's time over
// ibtool's, without added latency and at 1 ms or more.
const (
	diagTarget        = 5
	diagLatencyTarget = 20
	offlineCPUTarget  = time.Second
)

// seqSample is one run of the C sequence: the tools' times added, their
// largest peak RSS, the MADs of them all, each tool's time.
type seqSample struct {
	sample
	tools []time.Duration
}

// diagRow is the sweep on one fabric at one latency.
type diagRow struct {
	fabric  string
	latency time.Duration
	c       []seqSample
	ours    []sample
	args    []string // ibtool's command line after the binary
}

// offlineRow is diagnose --load on a saved sweep of a big fabric.
type offlineRow struct {
	fabric   string
	nodes    int
	sweep    sample // the live sweep that saved it
	runs     []cpuSample
	findings string // what diagnose says of the saved sweep
	failed   string
}

// cpuSample is a run measured by GNU time: wall, user and system time,
// peak RSS.
type cpuSample struct {
	wall, cpu time.Duration
	rssKB     int64
	failed    string
}

// diagnoseArgs is ibtool's command line: the sweep without the counters'
// interval (the counters check reads them twice, an --interval apart, by
// default; the C tools read them once).
func diagnoseArgs(bin string) []string {
	return []string{bin, "diagnose", "--interval", "0"}
}

// diagnoseFabric runs the diagnose rows of one fabric: live at each
// latency, or (spec.scale) offline.
func diagnoseFabric(spec fabricSpec, latencies []time.Duration, cfg config, rep *report) {
	dir, err := os.MkdirTemp("", "ibbench-")
	check(err)
	defer os.RemoveAll(dir)
	fab, label, nodes := startFabric(spec, dir)
	defer fab.Stop()
	b := &bencher{fab: fab, cfg: cfg}
	b.probeCost = -(b.xmitPkts() - b.xmitPkts())
	if spec.scale {
		r := b.offlineRow(label, nodes, dir)
		rep.offline = append(rep.offline, r)
		progress("%s", r.summary())
		return
	}
	for _, lat := range latencies {
		var relay *simfabric.Relay
		if lat > 0 {
			relay, err = simfabric.StartRelay(fab, simfabric.RelayOptions{Latency: lat, Service: cfg.service})
			check(err)
		}
		r := b.diagRow(label, lat, relay)
		rep.diag = append(rep.diag, r)
		progress("%s", r.summary())
		if relay != nil {
			check(relay.Close())
		}
	}
}

// diagRow runs the C sequence and ibtool's sweep in turn, each round
// starting with the other.
func (b *bencher) diagRow(fabric string, lat time.Duration, relay *simfabric.Relay) diagRow {
	r := diagRow{fabric: fabric, latency: lat, args: diagnoseArgs(b.cfg.bin)}
	cRuns := b.cfg.runs
	if lat >= time.Millisecond {
		cRuns = min(b.cfg.runs, b.cfg.slowRuns)
	}
	for i := range b.cfg.runs {
		runC := func() {
			if i < cRuns {
				r.c = append(r.c, b.runSequence(relay))
			}
		}
		if i%2 == 0 {
			runC()
		}
		before := b.xmitPkts()
		s := measure(b.fab.Dir(), b.env(relay, false), r.args, 1)
		s.mads = b.xmitPkts() - before - b.probeCost
		r.ours = append(r.ours, s)
		if i%2 == 1 {
			runC()
		}
	}
	return r
}

// env is the environment of a run attached to the bench host, through
// the relay if there is one; C tools reach ibsim through umad2sim.
func (b *bencher) env(relay *simfabric.Relay, c bool) []string {
	env := b.fab.Env(attach)
	if relay != nil {
		env = relay.Env(attach)
	}
	if c {
		env = append(env, "LD_PRELOAD="+simfabric.Umad2Sim)
	}
	return env
}

// runSequence runs the C sequence once, tool after tool.
func (b *bencher) runSequence(relay *simfabric.Relay) seqSample {
	before := b.xmitPkts()
	var seq seqSample
	for _, t := range cSequence {
		bin := t.tool
		if p, err := exec.LookPath(t.tool); err == nil {
			bin = p
		} else if _, err := os.Stat("/usr/sbin/" + t.tool); err == nil {
			bin = "/usr/sbin/" + t.tool
		}
		s := measure(b.fab.Dir(), b.env(relay, true), append([]string{bin}, t.args...), t.errorsExit)
		// The C ibqueryerrors crashes now and then on ibsim's truncated
		// PathRecord table (report.go): such a run is run again.
		for try := 0; try < 2 && s.crashed; try++ {
			s = measure(b.fab.Dir(), b.env(relay, true), append([]string{bin}, t.args...), t.errorsExit)
		}
		seq.wall += s.wall
		seq.tools = append(seq.tools, s.wall)
		seq.rssKB = max(seq.rssKB, s.rssKB)
		if s.failed != "" && seq.failed == "" {
			seq.failed = s.failed
		}
	}
	seq.mads = b.xmitPkts() - before - b.probeCost
	return seq
}

// offlineRow sweeps the fabric once into a directory, then judges it
// offline cfg.runs times.
func (b *bencher) offlineRow(label string, nodes int, dir string) offlineRow {
	r := offlineRow{fabric: label, nodes: nodes}
	out := filepath.Join(dir, "diagnose")
	args := append(diagnoseArgs(b.cfg.bin), "--output-dir", out)
	r.sweep = measure(b.fab.Dir(), b.env(nil, false), args, 1)
	if r.sweep.failed != "" {
		r.failed = r.sweep.failed
		return r
	}
	r.findings = diagnoseVerdict(b.cfg.bin, out)
	for range b.cfg.runs {
		r.runs = append(r.runs, measureCPU(dir, []string{b.cfg.bin, "diagnose", "--load", out}, 1))
	}
	return r
}

// diagnoseVerdict is what diagnose --load says of a saved sweep: its errors and
// warnings, counted.
func diagnoseVerdict(bin, dir string) string {
	out, _ := exec.Command(bin, "diagnose", "--load", dir, "--json").Output()
	var doc struct {
		Complete bool `json:"complete"`
		Summary  []struct {
			Errors   int `json:"errors"`
			Warnings int `json:"warnings"`
		} `json:"summary"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		return "unreadable: " + err.Error()
	}
	errs, warns := 0, 0
	for _, c := range doc.Summary {
		errs, warns = errs+c.Errors, warns+c.Warnings
	}
	v := fmt.Sprintf("%d errors, %d warnings", errs, warns)
	if !doc.Complete {
		v += ", incomplete"
	}
	return v
}

// measureCPU runs a command under GNU time for its wall, user and
// system time and peak RSS; errorsExit is an exit status that is a
// result, not a failure.
func measureCPU(dir string, args []string, errorsExit int) cpuSample {
	stats := filepath.Join(dir, "ibbench.cpu")
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, timeCommand, append([]string{"-o", stats, "-f", "%e %U %S %M"}, args...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.Dir = dir
	err := cmd.Run()
	var s cpuSample
	if ee, ok := err.(*exec.ExitError); err != nil && !(ok && ee.ExitCode() == errorsExit) {
		s.failed = fmt.Sprintf("%s: %v", filepath.Base(args[0]), err)
	}
	b, rerr := os.ReadFile(stats)
	f := strings.Fields(lastLine(string(b)))
	if rerr != nil || len(f) != 4 {
		if s.failed == "" {
			s.failed = fmt.Sprintf("GNU time said %q", b)
		}
		return s
	}
	sec := func(v string) time.Duration {
		x, _ := strconv.ParseFloat(v, 64)
		return time.Duration(x * float64(time.Second))
	}
	s.wall, s.cpu = sec(f[0]), sec(f[1])+sec(f[2])
	s.rssKB, _ = strconv.ParseInt(f[3], 10, 64)
	return s
}

// target is the sweep's target at the row's latency.
func (r diagRow) target() float64 {
	if r.latency >= time.Millisecond {
		return diagLatencyTarget
	}
	return diagTarget
}

func (r diagRow) cWalls() []sample {
	out := make([]sample, len(r.c))
	for i, s := range r.c {
		out[i] = s.sample
	}
	return out
}

// ratio is the C sequence's median time over ibtool's.
func (r diagRow) ratio() float64 {
	c, o := median(r.cWalls(), wall), median(r.ours, wall)
	if o == 0 || r.failure() != "" {
		return 0
	}
	return c / o
}

func (r diagRow) failure() string {
	for _, s := range r.cWalls() {
		if s.failed != "" {
			return "C: " + s.failed
		}
	}
	for _, s := range r.ours {
		if s.failed != "" {
			return "ibtool: " + s.failed
		}
	}
	return ""
}

func (r diagRow) summary() string {
	return fmt.Sprintf("%s diagnose at %s: C sequence %s, ibtool %s, %.1fx (target %.0fx)%s", r.fabric, latencyLabel(r.latency),
		cell(r.cWalls()), cell(r.ours), r.ratio(), r.target(), failedNote(r.failure()))
}

// cell is a median and the range of the wall times.
func cell(ss []sample) string {
	if len(ss) == 0 {
		return "-"
	}
	v := values(ss, wall)
	c := fmt.Sprintf("%.3f s (%.3f-%.3f)", v[len(v)/2], v[0], v[len(v)-1])
	if len(ss) == 1 {
		c = fmt.Sprintf("%.3f s, 1 run", v[0])
	}
	return c
}

func failedNote(f string) string {
	if f == "" {
		return ""
	}
	return "; failed: " + strings.ReplaceAll(f, "|", "/")
}

func (r offlineRow) summary() string {
	if r.failed != "" {
		return fmt.Sprintf("%s diagnose --load: failed: %s", r.fabric, r.failed)
	}
	return fmt.Sprintf("%s diagnose --load: %s CPU, %s wall, %s peak RSS", r.fabric, cpuCell(r.runs, cpuOf), cpuCell(r.runs, wallOf), mb(median(r.runs, rssOf)))
}

func cpuOf(s cpuSample) float64  { return s.cpu.Seconds() }
func wallOf(s cpuSample) float64 { return s.wall.Seconds() }
func rssOf(s cpuSample) float64  { return float64(s.rssKB) }

func cpuCell(ss []cpuSample, f func(cpuSample) float64) string {
	if len(ss) == 0 {
		return "-"
	}
	for _, s := range ss {
		if s.failed != "" {
			return "failed: " + strings.ReplaceAll(s.failed, "|", "/")
		}
	}
	v := values(ss, f)
	return fmt.Sprintf("%.2f s (%.2f-%.2f)", v[len(v)/2], v[0], v[len(v)-1])
}

// diagnoseMarkdown is the diagnose rows' tables.
func (rep *report) diagnoseMarkdown() string {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	p("Measured %s on %s; load average %s at the end (other work shared the machine: compare the ratios, which alternate the tools run by run, more than the absolute times).\n\n",
		rep.started.UTC().Format("2006-01-02 15:04 UTC"), hostInfo(), loadAverage())
	if len(rep.diag) > 0 {
		p("The sweep: `ibtool %s` against the C tools in sequence (%s), median wall time over %d runs (the C sequence at 1 ms: %d) and the range; the C / ibtool ratio against the target.\n\n",
			strings.Join(rep.diag[0].args[1:], " "), cSequenceText(), rep.cfg.runs, min(rep.cfg.runs, rep.cfg.slowRuns))
		p("| fabric | latency | C sequence | ibtool diagnose | C / ibtool | target | met |\n|---|---|---|---|---|---|---|\n")
		for _, r := range rep.diag {
			met := "no"
			if r.failure() != "" {
				met = "failed: " + strings.ReplaceAll(r.failure(), "|", "/")
			} else if r.ratio() >= r.target() {
				met = "yes"
			}
			p("| %s | %s | %s | %s | %.1fx | %.0fx | %s |\n", r.fabric, latencyLabel(r.latency), cell(r.cWalls()), cell(r.ours), r.ratio(), r.target(), met)
		}
		p("\nThe C sequence tool by tool (median wall time), peak memory (GNU time's maximum RSS, median; for the C sequence its largest tool's) and MADs sent (the change of the host port's PortXmitPkts, median):\n\n")
		p("| fabric | latency |")
		for _, t := range cSequence {
			p(" %s |", strings.Join(append([]string{t.tool}, t.args...), " "))
		}
		p(" C peak RSS | ibtool peak RSS | C MADs | ibtool MADs |\n|---|---|")
		for range cSequence {
			p("---|")
		}
		p("---|---|---|---|\n")
		for _, r := range rep.diag {
			p("| %s | %s |", r.fabric, latencyLabel(r.latency))
			for k := range cSequence {
				p(" %s |", toolMedian(r.c, k))
			}
			p(" %s | %s | %s | %s |\n", mb(median(r.cWalls(), rss)), mb(median(r.ours, rss)), count(median(r.cWalls(), mads)), count(median(r.ours, mads)))
		}
	}
	if len(rep.offline) > 0 {
		p("\nOffline: `ibtool diagnose --load DIR` on a sweep of the fabric saved with `--output-dir DIR` (the routing and credit-loop analysis of every switch-to-LID route, and the other checks, with loading the cache and the tables and writing the text): CPU time (user and system, GNU time's %%U + %%S) and wall time, median over %d runs and the range, and peak RSS. Target: under %.0f s of CPU.\n\n",
			rep.cfg.runs, offlineCPUTarget.Seconds())
		p("| fabric | live sweep (saving) | diagnose --load CPU | wall | peak RSS | under 1 s CPU | the saved sweep's verdict |\n|---|---|---|---|---|---|---|\n")
		for _, r := range rep.offline {
			met := "no"
			if r.failed == "" && len(r.runs) > 0 && median(r.runs, cpuOf) < offlineCPUTarget.Seconds() {
				met = "yes"
			}
			sweep := fmt.Sprintf("%.3f s, %s", r.sweep.wall.Seconds(), mb(float64(r.sweep.rssKB)))
			if r.failed != "" {
				sweep = "failed: " + strings.ReplaceAll(r.failed, "|", "/")
			}
			p("| %s | %s | %s | %s | %s | %s | %s |\n", r.fabric, sweep, cpuCell(r.runs, cpuOf), cpuCell(r.runs, wallOf),
				mb(median(r.runs, rssOf)), met, strings.ReplaceAll(r.findings, "|", "/"))
		}
	}
	return b.String()
}

func cSequenceText() string {
	var parts []string
	for _, t := range cSequence {
		parts = append(parts, "`"+strings.Join(append([]string{t.tool}, t.args...), " ")+"`")
	}
	return strings.Join(parts, ", ")
}

// toolMedian is the median wall time of tool k of the sequence.
func toolMedian(ss []seqSample, k int) string {
	var v []sample
	for _, s := range ss {
		if k < len(s.tools) {
			v = append(v, sample{wall: s.tools[k]})
		}
	}
	if len(v) == 0 {
		return "-"
	}
	return fmt.Sprintf("%.3f s", median(v, wall))
}

const (
	diagStartMarker = "<!-- diagnose bench results: start (written by make bench BENCHFLAGS=-diagnose) -->"
	diagEndMarker   = "<!-- diagnose bench results: end -->"
)
