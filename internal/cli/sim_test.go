package cli

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ibtool/ibtool/internal/cli/cmdutil"
	"github.com/ibtool/ibtool/internal/rpc"
	"github.com/ibtool/ibtool/internal/sa"
	"github.com/ibtool/ibtool/internal/simfabric"
	"github.com/ibtool/ibtool/internal/umad"
	"github.com/ibtool/ibtool/internal/verbs"
	"github.com/ibtool/ibtool/internal/verbs/dlopen"
)

// Simulated fabrics are shared by the tests of this package (each takes a
// few seconds to come up) and stopped when the tests end.
var (
	fabricsMu sync.Mutex
	fabrics   = map[string]*simfabric.Fabric{}
)

func TestMain(m *testing.M) {
	umad.LingerMain() // the helper for a CONNECT given up on (see umad)
	// The verbs commands run in-process here, as in ibtool-verbs.
	verbs.UseC(dlopen.C{})
	code := m.Run()
	for _, f := range fabrics {
		f.Stop()
	}
	os.Exit(code)
}

// sharedFabric returns the running fabric of a test topology (a name for
// simfabric.TopologyPath), starting it on first use.
func sharedFabric(t *testing.T, topology string) *simfabric.Fabric {
	t.Helper()
	simfabric.RequireSim(t, true)
	fabricsMu.Lock()
	defer fabricsMu.Unlock()
	if f := fabrics[topology]; f != nil {
		return f
	}
	f, err := simfabric.Start(context.Background(), simfabric.Options{Topology: simfabric.TopologyPath(topology)})
	if err != nil {
		t.Fatal(err)
	}
	fabrics[topology] = f
	return f
}

// simSA opens an SA client on host's port of a simulated fabric; it
// returns the port's description and a func that closes the port (ibsim
// has 10 client slots: close it when done).
func simSA(t *testing.T, f *simfabric.Fabric, host string) (*sa.Client, umad.PortInfo, func()) {
	t.Helper()
	port, err := umad.NewSim(umad.SimConfig{SockName: f.SockName(), Host: host}).Open("", -1)
	if err != nil {
		t.Fatal(err)
	}
	eng := rpc.New(port, rpc.Options{Timeout: time.Second})
	client, err := sa.NewFromPort(eng, 0, 0)
	info, ierr := port.Info()
	if err != nil || ierr != nil {
		eng.Close()
		t.Fatal(errors.Join(err, ierr))
	}
	return client, info, func() { eng.Close() }
}

// runSim runs ibtool in-process against a simulated fabric, attached to
// host (the first node when empty).
func runSim(f *simfabric.Fabric, host string, args ...string) simfabric.Result {
	var out, errOut bytes.Buffer
	env := &cmdutil.Env{
		IO:        cmdutil.IO{In: strings.NewReader(""), Out: &out, Err: &errOut},
		Transport: umad.NewSim(umad.SimConfig{SockName: f.SockName(), Host: host}),
	}
	code := run(append([]string{"ibtool"}, args...), env)
	return simfabric.Result{Stdout: out.String(), Stderr: errOut.String(), Code: code}
}

// conform runs a command with ibtool and with the infiniband-diags tool of
// the same name on the same fabric and compares them.
func conform(t *testing.T, f *simfabric.Fabric, host string, tool string, args ...string) {
	t.Helper()
	simfabric.RequireTools(t, tool)
	c := f.RunC(context.Background(), host, tool, args...)
	ours := runSim(f, host, append([]string{tool}, args...)...)
	simfabric.Compare(t, tool+" "+strings.Join(args, " "), c, ours, simfabric.DropSimNoise)
}

// wantFailure checks a failed run as "ibtool <cmd>": the exit code, a
// stderr naming what failed, nothing on stdout, and (for a failure, not a
// usage error) exactly one line.
func wantFailure(t *testing.T, r simfabric.Result, code int, msg string) {
	t.Helper()
	if r.Code != code || !strings.Contains(r.Stderr, msg) || r.Stdout != "" {
		t.Fatalf("got exit %d, stderr %q, stdout %q; want exit %d and %q", r.Code, r.Stderr, r.Stdout, code, msg)
	}
	if n := strings.Count(strings.TrimSpace(r.Stderr), "\n"); code == cmdutil.ExitFailure && n != 0 {
		t.Fatalf("a failure must be one line, got %q", r.Stderr)
	}
}

// scriptTopologyCache is where infiniband-diags' perl scripts
// (ibfindnodesusing.pl, ibidsverify.pl) keep the ibnetdiscover output they
// reuse unless given -R: one file for the whole machine, holding whichever
// fabric a script saw last (or nothing, when that ibnetdiscover failed).
const scriptTopologyCache = "/var/cache/infiniband-diags/ibnetdiscover--.topology"

// freshScriptCache makes the next C script run rediscover the fabric the
// test uses instead of reading another test's topology.
func freshScriptCache(t *testing.T) {
	t.Helper()
	if err := os.Remove(scriptTopologyCache); err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
}

// cFails marks t for the conformance helpers (simfabric.ExpectFailure)
// when a case expects the C tool to fail.
func cFails(t testing.TB, fails bool) testing.TB {
	if fails {
		return simfabric.ExpectFailure(t)
	}
	return t
}
