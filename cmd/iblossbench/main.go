// Command iblossbench measures discovery under MAD loss on a simulated
// fat tree: `make lossbench`. It starts the fabric, runs ibtool
// ibnetdiscover without loss for the reference output and time, then sets
// ibsim's Error rate on every port of every switch, one rate after the
// other, and runs the discovery again several times at each, reporting
// the loss per attempt (timed-out attempts over attempts, from --stats),
// how many runs were complete and identical to the reference, and the
// wall times. docs/reliability.md records its figures.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/ibtool/ibtool/internal/simfabric"
	"github.com/ibtool/ibtool/internal/topogen"
)

// attach is a CA that OpenSM (on the first node) does not use.
const attach = "node0002"

func main() {
	size := flag.String("size", "S1000", "the fabric: a topogen preset")
	rates := flag.String("rates", "3,5", "ibsim Error rates (percent per switch port) to run")
	runs := flag.Int("runs", 10, "runs per rate")
	ibtool := flag.String("ibtool", "bin/ibtool", "the ibtool binary")
	extra := flag.String("args", "", "extra ibtool ibnetdiscover arguments")
	keep := flag.String("keep", "", "write the output of runs that differ into this directory")
	flag.Parse()
	bin, err := filepath.Abs(*ibtool)
	check(err)

	dir, err := os.MkdirTemp("", "iblossbench-")
	check(err)
	defer os.RemoveAll(dir)
	topo := filepath.Join(dir, *size+".net")
	gen, err := topogen.Preset(*size)
	check(err)
	check(gen.WriteFile(topo))
	fab, err := simfabric.Start(context.Background(), simfabric.Options{
		Topology: topo, IbsimFlags: gen.IbsimFlags(), StartTimeout: 15 * time.Minute,
		RunTimeout: 10 * time.Minute, OpenSMFlags: []string{"-s", "0"},
	})
	check(err)
	defer fab.Stop()
	args := append([]string{"ibnetdiscover", "--stats"}, strings.Fields(*extra)...)

	ref := run(fab, bin, args)
	if ref.code != 0 {
		fmt.Fprintf(os.Stderr, "iblossbench: reference run failed: %s\n", ref.stderr)
		os.Exit(1)
	}
	var base []time.Duration
	for i := 0; i < 3; i++ {
		base = append(base, run(fab, bin, args).wall)
	}
	baseMed := median(base)
	fmt.Printf("%s, %d switches; no loss: median %v over 3 runs, %d MADs\n\n", *size, len(gen.Switches()), baseMed.Round(time.Millisecond), ref.sent)
	fmt.Printf("| Error rate | loss per attempt | complete and identical | exit codes | median time | max time | max / no-loss median | MADs lost (max) |\n")
	fmt.Printf("|---|---|---|---|---|---|---|---|\n")
	for _, r := range strings.Split(*rates, ",") {
		setError(fab, gen.Switches(), r)
		var walls []time.Duration
		identical, attempts, timeouts, maxLost := 0, 0, 0, 0
		codes := map[int]int{}
		for i := 0; i < *runs; i++ {
			s := run(fab, bin, args)
			walls = append(walls, s.wall)
			codes[s.code]++
			if s.code == 0 && s.stdout == ref.stdout {
				identical++
			} else if *keep != "" {
				name := filepath.Join(*keep, fmt.Sprintf("rate%s-run%d", r, i))
				check(os.WriteFile(name+".out", []byte(s.stdout), 0o644))
				check(os.WriteFile(name+".err", []byte(s.stderr), 0o644))
				check(os.WriteFile(filepath.Join(*keep, "reference.out"), []byte(ref.stdout), 0o644))
			}
			attempts += s.sent
			timeouts += s.retried + s.lost
			maxLost = max(maxLost, s.lost)
		}
		sort.Slice(walls, func(i, j int) bool { return walls[i] < walls[j] })
		fmt.Printf("| %s%% | %.1f%% | %d of %d | %v | %v | %v | %.1fx | %d |\n", r,
			100*float64(timeouts)/float64(max(attempts, 1)), identical, *runs, codes,
			median(walls).Round(time.Millisecond), walls[len(walls)-1].Round(time.Millisecond),
			float64(walls[len(walls)-1])/float64(baseMed), maxLost)
	}
	setError(fab, gen.Switches(), "0")
}

func setError(fab *simfabric.Fabric, switches []*topogen.Node, rate string) {
	for _, sw := range switches {
		_, err := fab.Console(fmt.Sprintf("Error %q %s", sw.ID, rate))
		check(err)
	}
}

type sample struct {
	wall                time.Duration
	code                int
	stdout, stderr      string
	sent, retried, lost int
}

var statsRE = regexp.MustCompile(`MADs sent (\d+), retried (\d+), lost (\d+)`)

func run(fab *simfabric.Fabric, bin string, args []string) sample {
	start := time.Now()
	r := fab.Run(context.Background(), attach, bin, args...)
	s := sample{wall: time.Since(start), code: r.Code, stdout: simfabric.Timestamps(r.Stdout), stderr: r.Stderr}
	if m := statsRE.FindStringSubmatch(r.Stderr); m != nil {
		s.sent, _ = strconv.Atoi(m[1])
		s.retried, _ = strconv.Atoi(m[2])
		s.lost, _ = strconv.Atoi(m[3])
	}
	return s
}

func median(d []time.Duration) time.Duration {
	c := append([]time.Duration(nil), d...)
	sort.Slice(c, func(i, j int) bool { return c[i] < c[j] })
	return c[len(c)/2]
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "iblossbench:", err)
		os.Exit(1)
	}
}
