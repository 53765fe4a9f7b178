package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/internal/cli/cmd/ibping"
	"github.com/ibtool/ibtool/internal/cli/cmdutil"
	"github.com/ibtool/ibtool/internal/simfabric"
	"github.com/ibtool/ibtool/internal/umad"
	"github.com/ibtool/ibtool/internal/vendormad"
)

// serverFabric is a tiny.net fabric of its own for the server tests: a
// server attaches as SM to a CA (toggling its IsSM capability bit, which
// traps to OpenSM), which the other tests need not see.
func serverFabric(t *testing.T) *simfabric.Fabric {
	t.Helper()
	simfabric.RequireSim(t, true)
	fabricsMu.Lock()
	defer fabricsMu.Unlock()
	const key = "servers:tiny.net"
	if f := fabrics[key]; f != nil {
		return f
	}
	f, err := simfabric.Start(context.Background(), simfabric.Options{Topology: simfabric.TopologyPath("tiny.net")})
	if err != nil {
		t.Fatal(err)
	}
	fabrics[key] = f
	return f
}

var attachedSM = regexp.MustCompile(`connected at "([^"]+)" port 0x[0-9a-f]+, lid \d+, qp \d+ SM`)

// waitServer waits until a client is attached as SM to host.
func waitServer(t *testing.T, f *simfabric.Fabric, host string, done <-chan struct{}) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		out, err := f.Console("Attached")
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range attachedSM.FindAllStringSubmatch(out, -1) {
			if m[1] == host {
				return
			}
		}
		select {
		case <-done:
			t.Fatal("the server ended before it attached")
		case <-time.After(50 * time.Millisecond):
		}
	}
	t.Fatalf("no server attached to %s", host)
}

// startGoServer runs "ibtool <tool> -S" in-process, attached to host as an
// SM (SIM_SET_ISSM), until the returned stop is called.
func startGoServer(t *testing.T, f *simfabric.Fabric, host string, build func(*cmdutil.Env, string) *cobra.Command, args ...string) (stop func() (stdout, stderr string)) {
	t.Helper()
	var out, errOut bytes.Buffer
	env := &cmdutil.Env{
		IO:        cmdutil.IO{In: strings.NewReader(""), Out: &out, Err: &errOut},
		Transport: umad.NewSim(umad.SimConfig{SockName: f.SockName(), Host: host, IsSM: true}),
	}
	cmd := build(env, "")
	cmd.SetArgs(append([]string{"-S"}, args...))
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	var err error
	go func() {
		defer close(done)
		err = cmd.ExecuteContext(ctx)
	}()
	waitServer(t, f, host, done)
	var once sync.Once
	stop = func() (string, string) {
		once.Do(func() {
			cancel()
			<-done
			if err != nil {
				t.Errorf("server: %v (stderr %q)", err, errOut.String())
			}
		})
		return out.String(), errOut.String()
	}
	t.Cleanup(func() { stop() })
	return stop
}

// startCServer runs the C tool's server (<tool> -S) through umad2sim,
// attached to host as an SM, until the returned stop is called.
func startCServer(t *testing.T, f *simfabric.Fabric, host, tool string) (stop func()) {
	t.Helper()
	simfabric.RequireTools(t, tool, "env")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		// env sets SIM_SET_ISSM for the tool (RunC has no other way).
		f.RunC(ctx, host, "env", "SIM_SET_ISSM=1", tool, "-S")
	}()
	waitServer(t, f, host, done)
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); <-done }) }
	t.Cleanup(stop)
	return stop
}

// pingTimes hides what differs between runs: round trip times and the
// run's duration.
func pingTimes(s string) string {
	s = regexp.MustCompile(`time \d+\.\d{3} ms`).ReplaceAllString(s, "time T ms")
	s = regexp.MustCompile(`, time \d+ ms`).ReplaceAllString(s, ", time T ms")
	return regexp.MustCompile(`rtt min/avg/max = \S+ ms`).ReplaceAllString(s, "rtt min/avg/max = T ms")
}

// lidOf is the LID of a port GUID in the fabric.
func lidOf(t *testing.T, f *simfabric.Fabric, guid string) string {
	t.Helper()
	r := runSim(f, "", "ibaddr", "--json", "-G", guid)
	var a struct {
		LID int `json:"lid_start"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &a); err != nil || a.LID == 0 {
		t.Fatalf("no LID for %s: %v %v", guid, err, r)
	}
	return fmt.Sprint(a.LID)
}

const hca2GUID = "0x100004" // tiny.net's Hca2 port 1

func TestIbpingMatchesInfinibandDiags(t *testing.T) {
	simfabric.RequireTools(t, "ibping")
	f := serverFabric(t)
	lid := lidOf(t, f, hca2GUID)
	host := vendormad.HostAndDomain(216)
	norms := []simfabric.Normalizer{pingTimes}
	clients := []string{
		"-c 2 " + lid,
		"-c 3 -f " + lid, // flood: statistics only
		"-c 1 -G " + hca2GUID,
		"-c 1 -L " + lid,
		"-c 0 " + lid, // nothing sent
	}

	t.Run("ibtool server", func(t *testing.T) {
		stop := startGoServer(t, f, "Hca2", ibping.NewCmd)
		for _, args := range clients {
			conformLinked(t, f, "Hca1", "ibping", norms, strings.Fields(args)...)
		}
		r := runLinked(f, "Hca3", "ibping", "-c", "1", lid)
		if want := fmt.Sprintf("Pong from %s (Lid %s): time ", host, lid); !strings.HasPrefix(r.Stdout, want) || r.Code != 0 {
			t.Errorf("want %q, got %v", want, r)
		}
		// Another OUI: the server does not answer (as the kernel would
		// not deliver it; umad2sim gives the C server everything).
		r = runLinked(f, "Hca1", "ibping", "-c", "1", "-t", "100", "-o", "0x1234", lid)
		if !strings.Contains(r.Stdout, "1 packets transmitted, 0 received, 100% packet loss") || r.Code != 0 {
			t.Errorf("-o: %v", r)
		}
		if out, errOut := stop(); out != "" || errOut != "" {
			t.Errorf("the server printed %q %q", out, errOut)
		}
	})

	t.Run("C server", func(t *testing.T) {
		stop := startCServer(t, f, "Hca2", "ibping")
		defer stop()
		for _, args := range clients {
			conformLinked(t, f, "Hca1", "ibping", norms, strings.Fields(args)...)
		}
		r := runLinked(f, "Hca3", "ibping", "-c", "1", lid)
		if want := fmt.Sprintf("Pong from %s (Lid %s): time ", host, lid); !strings.HasPrefix(r.Stdout, want) || r.Code != 0 {
			t.Errorf("want %q, got %v", want, r)
		}
	})

	t.Run("no server", func(t *testing.T) {
		// ibsim bounces the requests: every ping is lost, exit 0.
		conformLinked(t, f, "Hca1", "ibping", norms, "-c", "2", lid)
		conformLinked(t, f, "Hca1", "ibping", norms, "-c", "2", "-f", "99")
	})
}

func TestIbpingFailures(t *testing.T) {
	f := serverFabric(t)
	// ibsim gives requests only to a client connected as SM.
	r := runSim(f, "Hca2", "ibping", "-S")
	if r.Code != cmdutil.ExitFailure || !strings.Contains(r.Stderr, "can't serve class 50 on this port") || !strings.Contains(r.Stderr, "SIM_SET_ISSM=1") {
		t.Errorf("-S without SIM_SET_ISSM: %v", r)
	}
	r = runLinked(f, "Hca2", "ibping", "-S")
	if r.Code != cmdutil.ExitFailure || r.Stdout != "ibping: iberror: failed: can't serve class 50 on this port\n" || !strings.Contains(r.Stderr, "SIM_SET_ISSM") {
		t.Errorf("-S without SIM_SET_ISSM (compat): %v", r)
	}
	for _, tc := range []struct {
		args string
		code int
		msg  string
	}{
		{"", cmdutil.ExitUsage, "expected <dest lid|guid>"},
		{"-c x 3", cmdutil.ExitUsage, `invalid count "x"`},
		{"-o 0x1000000 3", cmdutil.ExitUsage, `invalid OUI "0x1000000"`},
		{"-G 0x999", cmdutil.ExitFailure, "can't resolve destination port 0x999: the SA knows no path"},
		{"-D 0,1", cmdutil.ExitUsage, "unknown shorthand flag: 'D'"},
	} {
		r := runSim(f, "", append([]string{"ibping"}, strings.Fields(tc.args)...)...)
		if r.Code != tc.code || !strings.Contains(r.Stderr, tc.msg) {
			t.Errorf("%s: got %v; want exit %d and %q", tc.args, r, tc.code, tc.msg)
		}
	}
	simfabric.RequireTools(t, "ibping")
	for _, args := range []string{"", "-G 0x999", "abc", "0"} {
		conformLinked(simfabric.ExpectFailure(t), f, "", "ibping", nil, strings.Fields(args)...)
	}
}

func TestIbpingJSON(t *testing.T) {
	f := serverFabric(t)
	lid := lidOf(t, f, hca2GUID)
	stop := startGoServer(t, f, "Hca2", ibping.NewCmd)
	defer stop()
	r := runSim(f, "Hca1", "ibping", "--json", "-f", "-c", "3", lid)
	var got ibping.IbpingResult
	if err := json.Unmarshal([]byte(r.Stdout), &got); err != nil || r.Code != 0 {
		t.Fatal(err, r)
	}
	if got.Target.Text != "Lid "+lid || got.Target.Route != "lid" || got.Host != vendormad.HostAndDomain(216) || got.Transmitted != 3 || got.Received != 3 || got.LossPercent != 0 ||
		len(got.Pongs) != 3 || got.Pongs[2].Seq != 3 || got.RTTMinMS > got.RTTAvgMS || got.RTTAvgMS > got.RTTMaxMS || got.RTTMaxMS == 0 {
		t.Errorf("got %+v", got)
	}
}
