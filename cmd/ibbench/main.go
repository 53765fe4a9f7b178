// Command ibbench times ibtool against infiniband-diags on simulated fat
// trees of several sizes: `make bench`. For each fabric it runs every
// command pair several times, alternating which tool goes first, and
// reports the median wall time, peak RSS and MADs sent, and whether the
// outputs were identical. The method is described in docs/performance.md.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/ibtool/ibtool/internal/simfabric"
)

// attach is where both tools run: a CA that OpenSM (on the first node)
// does not use, so its port counters count only the tool's MADs.
const attach = "node0002"

type job struct {
	name  string
	c     []string // infiniband-diags command line
	ours  []string // ibtool command line (after the binary)
	cache bool     // needs the cache file written first
}

func jobs(cache string) []job {
	return []job{
		{name: "ibnetdiscover", c: []string{"ibnetdiscover"}, ours: []string{"ibnetdiscover"}},
		// The C tool with as many SMPs in flight as ibtool keeps.
		{name: "ibnetdiscover (C with -o 32)", c: []string{"ibnetdiscover", "-o", "32"}, ours: []string{"ibnetdiscover"}},
		{name: "iblinkinfo", c: []string{"iblinkinfo"}, ours: []string{"iblinkinfo"}},
		{name: "iblinkinfo --load-cache", c: []string{"iblinkinfo", "--load-cache", cache},
			ours: []string{"iblinkinfo", "--load-cache", cache}, cache: true},
	}
}

type sample struct {
	wall   time.Duration
	rssKB  int64
	mads   int64
	output string
	failed string
}

func main() {
	sizes := flag.String("sizes", "S200,S1000,S2000", "gen_topo.py presets to run")
	runs := flag.Int("runs", 5, "runs per tool and command")
	ibtool := flag.String("ibtool", "bin/ibtool", "the ibtool binary")
	genTopo := flag.String("gen", "../shared/tools/gen_topo.py", "gen_topo.py")
	update := flag.String("update", "", "also write the results into this markdown file, between the bench markers")
	flag.Parse()
	if _, err := os.Stat(timeCommand); err != nil {
		fmt.Fprintf(os.Stderr, "ibbench: %s (GNU time, Debian package time) measures peak RSS: %v\n", timeCommand, err)
		os.Exit(1)
	}
	bin, err := filepath.Abs(*ibtool)
	check(err)
	var out strings.Builder
	printf := func(format string, a ...any) {
		fmt.Fprintf(&out, format, a...)
		fmt.Printf(format, a...)
	}
	printf("Measured %s on %s, %d runs each, alternating which tool goes first.\n\n",
		time.Now().UTC().Format("2006-01-02"), hostInfo(), *runs)
	printf("| fabric | command | C median | ibtool median | C / ibtool | C peak RSS | ibtool peak RSS | C MADs | ibtool MADs | identical output |\n")
	printf("|---|---|---|---|---|---|---|---|---|---|\n")
	for _, size := range strings.Split(*sizes, ",") {
		benchSize(size, *genTopo, bin, *runs, printf)
	}
	if *update != "" {
		check(replaceBetweenMarkers(*update, out.String()))
	}
}

const (
	startMarker = "<!-- bench results: start (written by make bench) -->"
	endMarker   = "<!-- bench results: end -->"
)

// replaceBetweenMarkers puts results between the markers of a file.
func replaceBetweenMarkers(path, results string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	text := string(b)
	i, j := strings.Index(text, startMarker), strings.Index(text, endMarker)
	if i < 0 || j < i {
		return fmt.Errorf("%s has no bench result markers", path)
	}
	text = text[:i+len(startMarker)] + "\n" + results + text[j:]
	return os.WriteFile(path, []byte(text), 0o644)
}

func benchSize(size, genTopo, bin string, runs int, printf func(string, ...any)) {
	dir, err := os.MkdirTemp("", "ibbench-")
	check(err)
	defer os.RemoveAll(dir)
	topo := filepath.Join(dir, size+".net")
	net, err := exec.Command("python3", genTopo, "preset", size).Output()
	check(err)
	check(os.WriteFile(topo, net, 0o644))
	flagsOut, err := exec.Command("python3", genTopo, "preset", size, "--print-ibsim-flags").Output()
	check(err)
	nodes := strings.Count(string(net), "\nCa\t") + strings.Count(string(net), "\nSwitch\t")
	fab, err := simfabric.Start(context.Background(), simfabric.Options{
		Topology: topo, IbsimFlags: strings.Fields(string(flagsOut)), StartTimeout: 15 * time.Minute,
		RunTimeout: 10 * time.Minute,
		// No periodic sweeps: OpenSM's traffic would blur the MAD counts.
		OpenSMFlags: []string{"-s", "0"},
	})
	check(err)
	defer fab.Stop()
	first := xmitPkts(fab)
	probeCost = xmitPkts(fab) - first
	cache := filepath.Join(dir, "fabric.cache")
	label := fmt.Sprintf("%s (%d nodes)", size, nodes)
	for _, j := range jobs(cache) {
		if j.cache {
			r := run(fab, j, true, bin, []string{"ibnetdiscover", "--cache", cache})
			if r.failed != "" {
				printf("| %s | %s | cache could not be written: %s |\n", label, j.name, r.failed)
				continue
			}
		}
		var cs, ours []sample
		for i := 0; i < runs; i++ {
			order := []bool{true, false}
			if i%2 == 1 {
				order = []bool{false, true}
			}
			for _, isC := range order {
				args := j.ours
				if isC {
					args = j.c
				}
				s := run(fab, j, isC, bin, args)
				if isC {
					cs = append(cs, s)
				} else {
					ours = append(ours, s)
				}
			}
		}
		report(printf, label, j.name, cs, ours)
	}
}

// run runs one command attached to the bench host and measures it; the
// MADs are the change of the host port's PortXmitPkts (64-bit counter).
func run(fab *simfabric.Fabric, j job, isC bool, bin string, args []string) sample {
	before := xmitPkts(fab)
	env := fab.Env(attach)
	if isC {
		env = append(env, "LD_PRELOAD="+simfabric.Umad2Sim)
	} else {
		args = append([]string{bin}, args...)
	}
	// GNU time measures the peak RSS: Go starts children with vfork, and
	// a vforked child's ru_maxrss starts at its parent's (this program's)
	// peak, while time forks a copy of its own small image.
	rssFile := filepath.Join(fab.Dir(), "ibbench.rss")
	cmd := exec.Command(timeCommand, append([]string{"-o", rssFile, "-f", "%M"}, args...)...)
	cmd.Env = env
	cmd.Dir = fab.Dir()
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	start := time.Now()
	err := cmd.Run()
	s := sample{wall: time.Since(start), output: normalise(out.String())}
	if err != nil {
		s.failed = fmt.Sprintf("%v: %s", err, firstLine(errOut.String()))
	}
	if b, err := os.ReadFile(rssFile); err == nil {
		s.rssKB, _ = strconv.ParseInt(lastLine(string(b)), 10, 64)
	}
	s.mads = xmitPkts(fab) - before - probeCost
	return s
}

// timeCommand is GNU time (Debian package time), which `make bench`
// installs.
const timeCommand = "/usr/bin/time"

// lastLine is the last non-empty line of s: GNU time writes a line about
// a non-zero exit status before its format.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// probeCost is what one xmitPkts reading itself sends from the host port.
var probeCost int64

var xmitRE = regexp.MustCompile(`PortXmitPkts:\.*(\d+)`)

func xmitPkts(fab *simfabric.Fabric) int64 {
	r := fab.RunC(context.Background(), attach, "perfquery", "-x")
	m := xmitRE.FindStringSubmatch(r.Stdout)
	if m == nil {
		return 0
	}
	n, _ := strconv.ParseInt(m[1], 10, 64)
	return n
}

var stampRE = regexp.MustCompile(`(?m)^#.*(on|Topology file:).*$`)

func normalise(s string) string { return stampRE.ReplaceAllString(s, "#") }

func report(printf func(string, ...any), fabric, name string, cs, ours []sample) {
	identical := "yes"
	for i := range cs {
		if cs[i].output != ours[i].output {
			identical = "no"
		}
	}
	for _, s := range append(append([]sample{}, cs...), ours...) {
		if s.failed != "" {
			printf("| %s | %s | failed: %s |\n", fabric, name, s.failed)
			return
		}
	}
	wall := func(s sample) float64 { return s.wall.Seconds() }
	rss := func(s sample) float64 { return float64(s.rssKB) }
	mads := func(s sample) float64 { return float64(s.mads) }
	cm, om := median(cs, wall), median(ours, wall)
	printf("| %s | %s | %.3f s | %.3f s | %.1fx | %d MB | %d MB | %.0f | %.0f | %s |\n", fabric, name, cm, om, cm/om,
		int64(median(cs, rss))/1024, int64(median(ours, rss))/1024, median(cs, mads), median(ours, mads), identical)
}

func median(ss []sample, f func(sample) float64) float64 {
	v := make([]float64, len(ss))
	for i, s := range ss {
		v[i] = f(s)
	}
	sort.Float64s(v)
	if len(v) == 0 {
		return 0
	}
	return v[len(v)/2]
}

func hostInfo() string {
	out, _ := exec.Command("uname", "-srm").Output()
	return fmt.Sprintf("%d cores, %s", runtimeCPUs(), strings.TrimSpace(string(out)))
}

func runtimeCPUs() int {
	out, err := exec.Command("nproc").Output()
	if err != nil {
		return 0
	}
	n, _ := strconv.Atoi(strings.TrimSpace(string(out)))
	return n
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "ibbench:", err)
		os.Exit(1)
	}
}
