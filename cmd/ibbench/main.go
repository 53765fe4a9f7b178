// Command ibbench times ibtool against infiniband-diags on simulated fat
// trees (internal/topogen's presets S1000 to S10000): `make bench`. Every fabric runs in ibsim's UDP remote mode; the
// tools reach it directly (no added latency) or through a relay that
// delays every MAD (simfabric.Relay), as a real fabric's round trips do.
// Each command runs several times per tool (the C tool at its default, the
// C tool with -o 32 where it has that flag, ibtool), rotating which goes
// first, and the report gives wall-time medians with their spread, peak
// RSS, MADs sent and whether the outputs were identical, plus the
// simulator's own MAD rate (the floor no tool can beat) and how 10,000
// nodes scale. The method is described in docs/performance.md.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ibtool/ibtool/internal/simfabric"
	"github.com/ibtool/ibtool/internal/topogen"
)

// attach is where every tool runs: a CA that OpenSM (on the first node)
// does not use, so its port counters count only the tool's MADs.
const attach = "node0002"

// command is one row kind: a C tool and ibtool's namesake.
type command struct {
	name string
	c    []string // infiniband-diags command line
	ours []string // ibtool command line (after the binary)
	// hasO: the C tool takes -o (outstanding SMPs), so it also runs
	// with -o 32, ibtool's starting window.
	hasO bool
	// differs: the outputs are not meant to match (ibchecknet against
	// the C ibqueryerrors).
	differs bool
	// errorsExit is the exit status that reports errors found in the
	// fabric, a result like 0 (ibqueryerrors: 1); 0 when there is none.
	errorsExit int
	// loadCache: every tool reads the fabric from the same cache file,
	// which the C ibnetdiscover --cache makes once per fabric.
	loadCache bool
	// stats: ibtool runs with --stats and reports its PMA phase, whose
	// MADs and rate the report sets against the simulator floor.
	stats bool
	// noLatency: the row runs without added latency only, where it adds
	// little to a row that runs at every latency (ibcheckerrors reads what
	// ibchecknet reads, and its C counterpart's 7 runs at 1 ms would take
	// minutes).
	noLatency bool
}

var allCommands = []command{
	{name: "ibnetdiscover", c: []string{"ibnetdiscover"}, ours: []string{"ibnetdiscover"}, hasO: true},
	{name: "iblinkinfo", c: []string{"iblinkinfo"}, ours: []string{"iblinkinfo"}, hasO: true},
	{name: "dump_fts", c: []string{"dump_fts"}, ours: []string{"dump_fts"}},
	{name: "dump_lfts", c: []string{"dump_lfts"}, ours: []string{"dump_lfts"}},
	{name: "ibqueryerrors", c: []string{"ibqueryerrors"}, ours: []string{"ibqueryerrors"}, hasO: true, errorsExit: 1, stats: true},
	{name: "ibqueryerrors --load-cache", c: []string{"ibqueryerrors"}, ours: []string{"ibqueryerrors"}, errorsExit: 1,
		loadCache: true, stats: true},
	{name: "ibchecknet", c: []string{"ibqueryerrors"}, ours: []string{"ibchecknet"}, hasO: true, differs: true, errorsExit: 1},
	{name: "ibcheckerrors", c: []string{"ibqueryerrors"}, ours: []string{"ibcheckerrors"}, hasO: true, differs: true, errorsExit: 1,
		noLatency: true},
}

// fabricSpec is one fabric size and what runs on it.
type fabricSpec struct {
	name      string          // the topogen preset
	latencies []time.Duration // nil: the -latencies flag's
	commands  []string        // if set, only these of the -commands flag
	scale     bool            // only the scaling runs (ibnetdiscover)
}

// The diagnose rows' fabrics and latencies unless -sizes and -latencies
// say otherwise: the sweep on the 2000-node fabric, the offline analysis
// on the 10,000-node one.
const (
	diagnoseSizes     = "S2000,S10000"
	diagnoseLatencies = "0,1ms"
	offlineFabric     = "S10000"
)

var fabrics = []fabricSpec{
	{name: "S1000"},
	{name: "S2000"},
	// Without latency only, and without the dump_fts family, whose
	// output for 5000 nodes is 200 MB.
	{name: "S5000", latencies: []time.Duration{0},
		commands: []string{"ibnetdiscover", "iblinkinfo", "ibqueryerrors", "ibchecknet"}},
	// 10,242 nodes: only the scaling runs.
	{name: "S10000", scale: true},
}

type config struct {
	bin       string
	exporter  string // the ibtool-exporter binary, for the exporter row
	runs      int    // per tool and row
	slowRuns  int    // of the C default at 1 ms and more (cDefaultRuns)
	latencies []time.Duration
	commands  []string
	service   time.Duration
}

func main() {
	sizes := flag.String("sizes", "S1000,S2000,S5000,S10000", "fabrics to run: "+fabricNames())
	lat := flag.String("latencies", "0,100us,1ms", "one-way latencies of the S1000 and S2000 rows (Go durations)")
	cmds := flag.String("commands", "ibnetdiscover,iblinkinfo,dump_fts,dump_lfts,ibqueryerrors,ibqueryerrors --load-cache,ibchecknet,ibcheckerrors,exporter",
		"commands to run, by row name (those ibtool lacks are left out; exporter: scrapes of ibtool-exporter, at no added latency)")
	runs := flag.Int("runs", 7, "runs per tool and row")
	slowRuns := flag.Int("slow-runs", 1, "runs of the C default at 1 ms or more (15-90 s a run; at 100 us it runs 3 times)")
	service := flag.Duration("service", 0, "SMA service time the relay adds per request (0: none)")
	ibtool := flag.String("ibtool", "bin/ibtool", "the ibtool binary")
	exporterBin := flag.String("exporter", "bin/ibtool-exporter", "the ibtool-exporter binary (the exporter row and -soak)")
	soakRun := flag.Bool("soak", false, "instead of the bench, soak ibtool-exporter on -fabric for -scrapes scrapes (make soak)")
	soakFabric := flag.String("fabric", "S2000", "the -soak fabric: "+fabricNames())
	soakScrapes := flag.Int("scrapes", 1000, "the -soak scrapes")
	update := flag.String("update", "", "also write the results into this markdown file, between the bench markers")
	diagnoseRows := flag.Bool("diagnose", false, "instead of the bench, its diagnose rows alone (no one-shot rows): ibtool diagnose against the C tools in sequence on -sizes "+
		"(default "+diagnoseSizes+"; "+offlineFabric+": the offline analysis) at -latencies (default "+diagnoseLatencies+")")
	oneShot := flag.Bool("oneshot", true, "also run the one-shot rows: single invocations on a 5-node fabric against the C tools and a trivial Go program")
	oneShotOnly := flag.Bool("oneshot-only", false, "run only the one-shot rows")
	oneShotRuns := flag.Int("oneshot-runs", 21, "runs per tool of each one-shot row but the 200-call loop, which runs -runs times")
	oneShotTopology := flag.String("oneshot-topology", "testdata/topologies/tiny.net", "the one-shot rows' fabric, whose Switch2 has LID "+oneShotLID)
	flag.Parse()
	explicit := map[string]bool{}
	flag.Visit(func(f *flag.Flag) { explicit[f.Name] = true })
	if *diagnoseRows {
		if !explicit["sizes"] {
			*sizes = diagnoseSizes
		}
		if !explicit["latencies"] {
			*lat = diagnoseLatencies
		}
	}
	exporter, err := filepath.Abs(*exporterBin)
	check(err)
	if *soakRun {
		i := slices.IndexFunc(fabrics, func(f fabricSpec) bool { return f.name == *soakFabric })
		if i < 0 {
			fail(fmt.Errorf("unknown fabric %q (have %s)", *soakFabric, fabricNames()))
		}
		runSoak(fabrics[i], exporter, *soakScrapes)
		return
	}
	if _, err := os.Stat(timeCommand); err != nil {
		fail(fmt.Errorf("%s (GNU time, Debian package time) measures peak RSS: %v", timeCommand, err))
	}
	bin, err := filepath.Abs(*ibtool)
	check(err)
	if *oneShot && !*diagnoseRows || *oneShotOnly {
		started := time.Now()
		rows, err := benchOneShot(*oneShotTopology, bin, *oneShotRuns, *runs)
		check(err)
		text := oneShotMarkdown(rows, *oneShotRuns, *runs, started)
		fmt.Print("\n" + text)
		if *update != "" {
			check(replaceBetweenMarkers(*update, oneShotStartMarker, oneShotEndMarker, text))
		}
		if *oneShotOnly {
			return
		}
	}
	cfg := config{bin: bin, exporter: exporter, runs: *runs, slowRuns: *slowRuns, service: *service}
	for _, s := range strings.Split(*lat, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(s))
		check(err)
		cfg.latencies = append(cfg.latencies, d)
	}
	for _, name := range strings.Split(*cmds, ",") {
		name = strings.TrimSpace(name)
		tool := name // the exporter row's command
		if i := slices.IndexFunc(allCommands, func(c command) bool { return c.name == name }); i >= 0 {
			tool = allCommands[i].ours[0]
		} else if name != "exporter" {
			fail(fmt.Errorf("unknown command row %q", name))
		}
		if name == "exporter" {
			if _, err := os.Stat(exporter); err == nil {
				cfg.commands = append(cfg.commands, name)
			} else {
				fmt.Fprintf(os.Stderr, "ibbench: no %s: the exporter row is left out\n", exporter)
			}
			continue
		}
		if hasCommand(bin, tool) {
			cfg.commands = append(cfg.commands, name)
		} else {
			fmt.Fprintf(os.Stderr, "ibbench: ibtool has no %s: left out\n", tool)
		}
	}
	rep := &report{started: time.Now(), cfg: cfg}
	if *diagnoseRows {
		for _, name := range strings.Split(*sizes, ",") {
			i := slices.IndexFunc(fabrics, func(f fabricSpec) bool { return f.name == name })
			if i < 0 {
				fail(fmt.Errorf("unknown fabric %q (have %s)", name, fabricNames()))
			}
			diagnoseFabric(fabrics[i], cfg.latencies, cfg, rep)
		}
		text := rep.diagnoseMarkdown()
		fmt.Print("\n" + text)
		if *update != "" {
			check(replaceBetweenMarkers(*update, diagStartMarker, diagEndMarker, text))
		}
		return
	}
	for _, name := range strings.Split(*sizes, ",") {
		i := slices.IndexFunc(fabrics, func(f fabricSpec) bool { return f.name == name })
		if i < 0 {
			fail(fmt.Errorf("unknown fabric %q (have %s)", name, fabricNames()))
		}
		benchFabric(fabrics[i], cfg, rep)
	}
	text := rep.markdown()
	fmt.Print("\n" + text)
	if *update != "" {
		check(replaceBetweenMarkers(*update, startMarker, endMarker, text))
	}
}

func fabricNames() string {
	var names []string
	for _, f := range fabrics {
		names = append(names, f.name)
	}
	return strings.Join(names, ",")
}

// hasCommand says whether the ibtool binary has a command (commands are
// added over time; the bench runs what is there): help for an unknown
// command is a usage error.
func hasCommand(bin, name string) bool {
	return exec.Command(bin, name, "--help").Run() == nil
}

// startFabric generates spec's fabric into dir and starts it; label
// names it with its node count.
func startFabric(spec fabricSpec, dir string) (fab *simfabric.Fabric, label string, nodes int) {
	topo := filepath.Join(dir, spec.name+".net")
	gen, err := topogen.Preset(spec.name)
	check(err)
	check(gen.WriteFile(topo))
	nodes = gen.Counts().Nodes()
	label = fmt.Sprintf("%s (%d nodes)", spec.name, nodes)
	progress("%s: starting ibsim and OpenSM", label)
	started := time.Now()
	fab, err = simfabric.Start(context.Background(), simfabric.Options{
		Topology: topo, IbsimFlags: gen.IbsimFlags(), StartTimeout: 30 * time.Minute,
		RunTimeout: 10 * time.Minute, Remote: true,
		// No periodic sweeps: OpenSM's traffic would blur the MAD counts.
		OpenSMFlags: []string{"-s", "0"},
	})
	check(err)
	progress("%s: up after %.0f s", label, time.Since(started).Seconds())
	return fab, label, nodes
}

// benchFabric starts one fabric and runs its rows.
func benchFabric(spec fabricSpec, cfg config, rep *report) {
	dir, err := os.MkdirTemp("", "ibbench-")
	check(err)
	defer os.RemoveAll(dir)
	fab, label, nodes := startFabric(spec, dir)
	defer fab.Stop()
	b := &bencher{fab: fab, cfg: cfg}
	b.probeCost = b.xmitPkts() - b.xmitPkts()
	b.probeCost = -b.probeCost
	if needsCache(cfg.commands, spec) {
		b.cache = filepath.Join(dir, spec.name+".cache")
		if r := fab.RunC(context.Background(), attach, "ibnetdiscover", "--cache", b.cache); r.Code != 0 {
			fail(fmt.Errorf("%s: the cache for the --load-cache rows: %s", label, firstLine(r.Stderr)))
		}
	}

	if spec.scale {
		rep.scaling = append(rep.scaling, b.scaleRow(label, nodes))
		return
	}
	floor, err := simFloor(fab)
	if err != nil {
		progress("%s: simulator floor: %v", label, err)
	}
	fr := floorRow{fabric: label, madsPerSec: floor}
	if b.cache != "" {
		if fr.pmaMadsPerSec, err = pmaFloor(fab, b.cache); err != nil {
			progress("%s: PMA floor: %v", label, err)
		}
	}
	rep.floors = append(rep.floors, fr)
	latencies := spec.latencies
	if latencies == nil {
		latencies = cfg.latencies
	}
	for _, lat := range latencies {
		var relay *simfabric.Relay
		if lat > 0 {
			relay, err = simfabric.StartRelay(fab, simfabric.RelayOptions{Latency: lat, Service: cfg.service})
			check(err)
		}
		for _, cmd := range allCommands {
			if !slices.Contains(cfg.commands, cmd.name) || spec.commands != nil && !slices.Contains(spec.commands, cmd.name) ||
				cmd.noLatency && lat > 0 {
				continue
			}
			row := b.row(label, cmd, lat, relay)
			row.floor = floor
			rep.rows = append(rep.rows, row)
			progress("%s", row.summary())
		}
		if lat == 0 && slices.Contains(cfg.commands, "exporter") && (spec.commands == nil || slices.Contains(spec.commands, "exporter")) {
			er := b.exporterRow(label)
			rep.exporters = append(rep.exporters, er)
			progress("%s", er.summary())
		}
		if relay != nil {
			// (No row at this latency when only the exporter runs.)
			if n := len(rep.rows); n > 0 && rep.rows[n-1].latency == lat {
				st := relay.Stats()
				rep.rows[n-1].relayLate = st.MeanLate
				if st.Frames > 0 {
					rep.rows[n-1].relayCPU = st.CPU / time.Duration(st.Frames)
				}
			}
			check(relay.Close())
		}
		if lat == 0 && slices.Contains(cfg.commands, "ibnetdiscover") {
			for _, r := range rep.rows {
				if r.fabric == label && r.cmd.name == "ibnetdiscover" && r.latency == 0 {
					rep.scaling = append(rep.scaling, scaleFromRow(r, nodes))
				}
			}
		}
	}
}

// needsCache says whether a row of spec's that runs reads a cache file,
// or reports a PMA phase, whose PMA floor takes the LIDs from the cache.
func needsCache(commands []string, spec fabricSpec) bool {
	for _, c := range allCommands {
		if (c.loadCache || c.stats) && slices.Contains(commands, c.name) && (spec.commands == nil || slices.Contains(spec.commands, c.name)) {
			return !spec.scale
		}
	}
	return false
}

func progress(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "%s ibbench: %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, a...))
}

// The markers of the results in docs/performance.md: the fabric rows' and
// the one-shot rows', each written only by a run that has them.
const (
	startMarker        = "<!-- bench results: start (written by make bench) -->"
	endMarker          = "<!-- bench results: end -->"
	oneShotStartMarker = "<!-- one-shot results: start (written by make bench) -->"
	oneShotEndMarker   = "<!-- one-shot results: end -->"
)

// replaceBetweenMarkers puts results between a pair of markers of a file.
func replaceBetweenMarkers(path, start, end, results string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	text := string(b)
	i, j := strings.Index(text, start), strings.Index(text, end)
	if i < 0 || j < i {
		return fmt.Errorf("%s has no markers %s ... %s", path, start, end)
	}
	text = text[:i+len(start)] + "\n" + results + text[j:]
	return os.WriteFile(path, []byte(text), 0o644)
}

func check(err error) {
	if err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "ibbench:", err)
	os.Exit(1)
}
