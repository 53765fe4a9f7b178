package discovery

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ibtool/ibtool/internal/rpc"
	"github.com/ibtool/ibtool/internal/simfabric"
	"github.com/ibtool/ibtool/internal/umad"
)

// BenchmarkDiscoverSim walks a simulated fabric as ibnetdiscover does
// (8 SMPs in flight against ibsim) and, for comparison, times
// infiniband-diags' ibnetdiscover on the same fabric (c-ns/op: the whole
// C process, start-up included). The fabric is fattree-200.net, or the net
// file in IBTOOL_BENCH_TOPOLOGY started with the ibsim flags in
// IBTOOL_BENCH_IBSIM_FLAGS (e.g. `go run ./cmd/ibtopogen -preset S2000`
// and what its -ibsim-flags prints).
func BenchmarkDiscoverSim(b *testing.B) {
	simfabric.RequireSim(b, true)
	topo := os.Getenv("IBTOOL_BENCH_TOPOLOGY")
	if topo == "" {
		topo = simfabric.TopologyPath("fattree-200.net")
	}
	ctx := context.Background()
	f, err := simfabric.Start(ctx, simfabric.Options{
		Topology: topo, IbsimFlags: strings.Fields(os.Getenv("IBTOOL_BENCH_IBSIM_FLAGS")),
		StartTimeout: 5 * time.Minute, RunTimeout: 5 * time.Minute,
	})
	if err != nil {
		b.Fatal(err)
	}
	defer f.Stop()
	port, err := umad.NewSim(umad.SimConfig{SockName: f.SockName()}).Open("", -1)
	if err != nil {
		b.Fatal(err)
	}
	eng := rpc.New(port, rpc.Options{Window: 8, Retries: 3})
	defer eng.Close()

	var nodes int
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		fab, err := Discover(ctx, eng, Options{})
		if err != nil {
			b.Fatal(err)
		}
		if len(fab.Errors) > 0 {
			b.Fatalf("%d errors, e.g. %v", len(fab.Errors), fab.Errors[0])
		}
		nodes = len(fab.Nodes)
	}
	elapsed := b.Elapsed()
	b.StopTimer()
	b.ReportMetric(float64(eng.Stats().Sent)/elapsed.Seconds(), "MADs/s")
	b.ReportMetric(float64(nodes), "nodes")

	if testing.Short() {
		return
	}
	simfabric.RequireTools(b, "ibnetdiscover")
	const runs = 3
	start := time.Now()
	for range runs {
		if r := f.RunC(ctx, "", "ibnetdiscover"); r.Code != 0 {
			b.Fatalf("C ibnetdiscover: %v", r)
		}
	}
	b.ReportMetric(float64(time.Since(start).Nanoseconds())/runs, "c-ns/op")
}
