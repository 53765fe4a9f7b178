package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/ibtool/ibtool/internal/exporter/soak"
)

// runSoak is make soak: ibtool-exporter on spec's fabric for scrapes
// scrapes while CA links go down and up and OpenSM restarts (the soak
// make test runs on the 200-node fabric), and the figures on stdout. It
// exits 1 if a scrape failed outright, a figure grew or the exporter did
// not stop with status 0.
func runSoak(spec fabricSpec, exporter string, scrapes int) {
	dir, err := os.MkdirTemp("", "ibbench-soak-")
	check(err)
	defer os.RemoveAll(dir)
	fab, label, _ := startFabric(spec, dir)
	defer fab.Stop()
	rep, err := soak.Run(context.Background(), soak.Config{
		Exporter: exporter, Fabric: fab, Attach: attach,
		// A rediscovery every 30 s; a MAD to a port whose link went
		// down is lost, and -t 200 with one resend keeps such a scrape
		// short until the next rediscovery.
		Args:    []string{"--refresh", "30s", "-t", "200", "--retries", "1"},
		Scrapes: scrapes, Timeout: 10 * time.Second, Samples: 50,
		Flaps: []string{`"node0010"[1]`, `"node0077"[1]`, `"node0150"[1]`, `"node1234"[1]`}, FlapEvery: 50,
		RestartEvery: 250,
		Log:          progress,
	})
	check(err)
	flat := soak.Flatness(rep.Samples)
	fmt.Printf("ibtool-exporter soak on %s: %d scrapes in %v (median %v, 90%% under %v, slowest %v)\n",
		label, rep.Scrapes, rep.Took.Round(time.Second), rep.Percentile(0.5).Round(time.Millisecond),
		rep.Percentile(0.9).Round(time.Millisecond), rep.Percentile(1).Round(time.Millisecond))
	fmt.Printf("  %d failed outright, %d incomplete, %d with ports that could not be read; %d link flaps, %d OpenSM restarts\n",
		rep.Failed, rep.Incomplete, rep.PortErrors, rep.Flaps, rep.Restarts)
	fmt.Printf("  after the warm-up -> at the end: %s\n", flat)
	fmt.Printf("  stopped by SIGTERM: %v\n", exitText(rep.ExitErr))
	var bad []string
	if rep.Failed > 0 {
		bad = append(bad, fmt.Sprintf("%d scrapes failed (the first: %s)", rep.Failed, rep.FirstFail))
	}
	if err := flat.Check(); err != nil {
		bad = append(bad, err.Error())
	}
	if rep.ExitErr != nil {
		bad = append(bad, "the exporter did not stop with status 0")
	}
	if len(bad) > 0 {
		fail(fmt.Errorf("soak: %v", bad))
	}
}

func exitText(err error) string {
	if err == nil {
		return "status 0"
	}
	return err.Error()
}
