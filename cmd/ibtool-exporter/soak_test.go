package main

import (
	"context"
	"testing"
	"time"

	"github.com/ibtool/ibtool/internal/exporter/soak"
	"github.com/ibtool/ibtool/internal/simfabric"
)

// TestSoak: 1,000 scrapes of the 200-node fabric while CA links go down
// and up every 50 scrapes and OpenSM restarts every 250, with a
// rediscovery every 3 s: no scrape fails outright, the exporter's
// goroutines, open files and heap end where they were after the warm-up,
// and SIGTERM still ends it with status 0. make soak runs the same on the
// 2000-node fabric.
func TestSoak(t *testing.T) {
	scrapes := 1000
	if testing.Short() {
		scrapes = 200
	}
	f := simfabric.StartT(t, "fattree-200.net")
	rep, err := soak.Run(context.Background(), soak.Config{
		Exporter: exporterBinary(t), Fabric: f, Attach: "node0002",
		// A MAD to a port whose link went down is lost: -t 100 and one
		// resend keep such a scrape short until the next rediscovery.
		Args:    []string{"--refresh", "3s", "-t", "100", "--retries", "1"},
		Scrapes: scrapes, Timeout: 10 * time.Second, Samples: 50,
		Flaps: []string{`"node0010"[1]`, `"node0077"[1]`, `"node0150"[1]`}, FlapEvery: 50,
		RestartEvery: 250,
		Log:          t.Logf,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d scrapes in %v (median %v, 90%% under %v, slowest %v): %d failed, %d incomplete, %d with port errors; %d flaps, %d OpenSM restarts",
		rep.Scrapes, rep.Took.Round(time.Second), rep.Percentile(0.5), rep.Percentile(0.9), rep.Percentile(1),
		rep.Failed, rep.Incomplete, rep.PortErrors, rep.Flaps, rep.Restarts)
	if rep.Failed > 0 {
		t.Errorf("%d scrapes failed outright; the first: %s", rep.Failed, rep.FirstFail)
	}
	if rep.PortErrors == 0 {
		t.Error("no scrape saw a port it could not read: the links did not go down under it")
	}
	if rep.ExitErr != nil {
		t.Errorf("SIGTERM after the soak: %v (want status 0)", rep.ExitErr)
	}
	flat := soak.Flatness(rep.Samples)
	t.Logf("after the warm-up -> at the end: %s", flat)
	if err := flat.Check(); err != nil {
		t.Error(err)
	}
}
