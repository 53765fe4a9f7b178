package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ibtool/ibtool/internal/exporter/cmdline"
	"github.com/ibtool/ibtool/internal/exporter/soak"
	"github.com/ibtool/ibtool/internal/simfabric"
	"github.com/ibtool/ibtool/internal/umad"
)

func TestMain(m *testing.M) {
	umad.LingerMain() // the tests open simulator ports
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

var (
	buildOnce sync.Once
	binDir    string
	binPath   string
	buildErr  error
)

// exporterBinary builds ibtool-exporter once for the tests that run it as
// a process (signals, exit status, a Prometheus scraping it).
func exporterBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		if binDir, buildErr = os.MkdirTemp("", "ibtool-exporter-test-"); buildErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "ibtool-exporter")
		out, err := exec.Command("go", "build", "-ldflags", "-X main.version=v9.9.9-test", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// runIn runs the exporter in-process on fabric f (nil: none) and returns
// its exit status, stdout and stderr.
func runIn(t *testing.T, f *simfabric.Fabric, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	tr := umad.NewSim(umad.SimConfig{SockName: "ibtool-test-nosim"})
	if f != nil {
		tr = umad.NewSim(umad.SimConfig{SockName: f.SockName()})
	}
	code := run(context.Background(), args, &out, &errOut, tr)
	return code, out.String(), errOut.String()
}

// Bad input is a usage error: exit 2 and one line naming what was wrong,
// before any port is opened.
func TestUsageErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--bogus"}, "unknown flag: --bogus"},
		{[]string{"now"}, `takes no arguments, got "now"`},
		{[]string{"--shard", "3/3"}, `invalid shard "3/3"`},
		{[]string{"--shard", "x"}, `invalid shard "x"`},
		{[]string{"--once", "--textfile", "f"}, "give one"},
		{[]string{"--web.telemetry-path", "metrics"}, "must start with /"},
		{[]string{"--refresh", "0s"}, "invalid --refresh"},
		{[]string{"-t", "0"}, `invalid -t "0"`},
		{[]string{"--sa", "--discovery", "DR"}, "--sa reads the SA's records"},
		{[]string{"--collector.counters=maybe"}, "invalid argument"},
		{[]string{"-y", "zz"}, `invalid M_Key "zz"`},
	} {
		code, out, errOut := runIn(t, nil, c.args...)
		if code != exitUsage || out != "" || !strings.HasPrefix(errOut, "ibtool-exporter: ") ||
			!strings.Contains(errOut, c.msg) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and one line with %q", c.args, code, out, errOut, c.msg)
		}
	}
}

// --help lists the toolkit's flags and not the old names; --version
// prints the build's version.
func TestHelpAndVersion(t *testing.T) {
	code, _, help := runIn(t, nil, "--help")
	if code != 0 {
		t.Errorf("--help: exit %d", code)
	}
	for _, want := range []string{"--web.listen-address", "--web.config.file", "--web.systemd-socket", "--web.telemetry-path",
		"--collector.error-details", "--shard", "--load-cache", "-C, --Ca", ":9315"} {
		if !strings.Contains(help, want) {
			t.Errorf("--help lacks %s", want)
		}
	}
	for _, hidden := range []string{"--listen-address", "--telemetry-path", "no-collector"} {
		if strings.Contains(help, "  "+hidden) || strings.Contains(help, "--"+hidden) {
			t.Errorf("--help shows the hidden %s", hidden)
		}
	}
	out, err := exec.Command(exporterBinary(t), "--version").Output()
	if err != nil || !strings.HasPrefix(string(out), "ibtool-exporter v9.9.9-test (go") {
		t.Errorf("--version: %v, %q", err, out)
	}
}

func TestFlagsSettle(t *testing.T) {
	for _, c := range []struct {
		args   []string
		listen []string
		path   string
		links  bool
	}{
		{nil, []string{":9315"}, "/metrics", true},
		{[]string{"--listen-address", ":1"}, []string{":1"}, "/metrics", true},
		{[]string{"--web.listen-address", ":2", "--web.listen-address", "[::1]:3", "--listen-address", ":1"}, []string{":2", "[::1]:3", ":1"}, "/metrics", true},
		{[]string{"--telemetry-path", "/old", "--no-collector.links"}, []string{":9315"}, "/old", false},
		{[]string{"--telemetry-path", "/old", "--web.telemetry-path", "/new", "--collector.links=false"}, []string{":9315"}, "/new", false},
	} {
		o := &cmdline.Options{}
		fs := cmdline.New(o)
		fs.SetOutput(io.Discard)
		if err := fs.Parse(c.args); err != nil {
			t.Fatal(err)
		}
		if err := settle(o, fs); err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(o.Listen) != fmt.Sprint(c.listen) || o.Path != c.path || o.Collect.Links != c.links {
			t.Errorf("%v: listen %q, path %q, links %v; want %q, %q, %v", c.args, o.Listen, o.Path, o.Collect.Links, c.listen, c.path, c.links)
		}
	}
}

// tiny.net's linked ports: Switch1 1, 4, 8; sw2 1, 4; the three CAs' port 1.
const tinyLinkedPorts = 8

func TestOnceAndTextfile(t *testing.T) {
	f := simfabric.StartT(t, "tiny.net")
	code, out, errOut := runIn(t, f, "--once")
	if code != 0 || errOut != "" {
		t.Fatalf("--once: exit %d, stderr %q", code, errOut)
	}
	promtoolCheck(t, out)
	for _, want := range []string{
		fmt.Sprintf("ib_scrape_ports %d", tinyLinkedPorts),
		"ib_scrape_port_errors 0",
		"ib_scrape_complete 1",
		`ib_port_link_info{node_guid="0x0000000000200000",node_name="Switch1",port="8",lid="1",remote_guid="0x0000000000200001",remote_name="sw2 desc",remote_port="4",speed="SDR",width="4X"} 1`,
		`ib_port_state{node_guid="0x0000000000200000",node_name="Switch1",port="2"} 1`, // a port without a link: Down
		`ib_port_link_rate_bytes_per_second{node_guid="0x0000000000100000",node_name="hca one",port="1"} 1.25e+09`,
		`ib_port_link_degraded{node_guid="0x0000000000100000",node_name="hca one",port="1"} 0`, // ibsim enables 4X SDR and runs it
		`ib_discovery_nodes{node_type="switch"} 2`,
	} {
		if !strings.Contains(out, "\n"+want+"\n") {
			t.Errorf("--once output lacks %s", want)
		}
	}
	for _, want := range []string{"\ngo_goroutines ", "\nprocess_open_fds ", "\nibtool_build_info{"} {
		if !strings.Contains(out, want) {
			t.Errorf("--once output lacks %s", strings.TrimSpace(want))
		}
	}
	if code, out, _ := runIn(t, f, "--once", "--no-collector.go", "--no-collector.process"); code != 0 || strings.Contains(out, "go_goroutines") || strings.Contains(out, "process_") {
		t.Errorf("--no-collector.go --no-collector.process: exit %d, still go_ or process_ metrics", code)
	}
	// ibsim's PMAs answer PortRcvErrorDetails; their ClassPortInfo has no
	// IsQP1DroppedSupported, so QP1Dropped is not exported.
	if out, err := f.Console(`PerformanceSet "Hca1"[1] PortRcvErrorDetails.PortLocalPhysicalErrors=3`); err != nil {
		t.Fatalf("PerformanceSet: %v %q", err, out)
	}
	code, out, _ = runIn(t, f, "--once", "--collector.error-details")
	if want := `ib_port_local_physical_errors_total{node_guid="0x0000000000100000",node_name="hca one",port="1"} 3`; code != 0 || !strings.Contains(out, "\n"+want+"\n") {
		t.Errorf("--collector.error-details: exit %d, no %s:\n%s", code, want, grep(out, "ib_port_local_physical_errors_total"))
	}
	if strings.Contains(out, "ib_port_qp1_dropped_total") || strings.Contains(out, "ib_port_scrape_error") {
		t.Errorf("QP1Dropped or a failed read on ibsim:\n%s", grep(out, "ib_port_qp1", "ib_port_scrape_error"))
	}
	promtoolCheck(t, out)

	dir := t.TempDir()
	file := filepath.Join(dir, "infiniband.prom")
	if code, out, errOut := runIn(t, f, "--textfile", file); code != 0 || out != "" || errOut != "" {
		t.Fatalf("--textfile: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	promtoolCheck(t, string(b))
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("the textfile directory holds %d files, want only the renamed one", len(entries))
	}
}

// SIGTERM stops the daemon cleanly: the scrape in flight is answered,
// and the status is 0, which systemd counts as a clean stop.
func TestSIGTERMStopsCleanly(t *testing.T) {
	f := simfabric.StartOptsT(t, simfabric.Options{Topology: "tiny.net", Remote: true})
	cache := fabricCache(t, f)
	// Every MAD takes 400 ms there and back: a scrape is in flight when
	// the signal comes.
	relay := startRelay(t, f, 200*time.Millisecond)
	d := startDaemon(t, relay.Env(""), "--load-cache", cache, "--listen-address", "127.0.0.1:0") // the old flag name still works
	if !strings.Contains(d.log(), "Flag --listen-address has been deprecated, use --web.listen-address") {
		t.Errorf("no deprecation warning for --listen-address:\n%s", d.log())
	}
	type result struct {
		status int
		body   string
		err    error
	}
	scraped := make(chan result, 1)
	start := time.Now()
	go func() {
		resp, err := http.Get("http://" + d.addr + "/metrics")
		if err != nil {
			scraped <- result{err: err}
			return
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		scraped <- result{resp.StatusCode, string(b), err}
	}()
	time.Sleep(200 * time.Millisecond)
	d.cmd.Process.Signal(syscall.SIGTERM)
	r := <-scraped
	if r.err != nil || r.status != 200 || !strings.Contains(r.body, "\nib_scrape_complete 1\n") ||
		!strings.Contains(r.body, fmt.Sprintf("\nib_scrape_ports %d\n", tinyLinkedPorts)) {
		t.Errorf("the scrape in flight at SIGTERM: %v, status %d:\n%s", r.err, r.status, grep(r.body, "ib_scrape"))
	}
	if took := time.Since(start); took < 700*time.Millisecond {
		t.Errorf("the scrape took %v: it was not in flight at SIGTERM", took)
	}
	if err := d.wait(); err != nil {
		t.Errorf("after SIGTERM: %v (want exit status 0)\n%s", err, d.log())
	}
	if !strings.Contains(d.log(), `msg=stopping signal=terminated`) {
		t.Errorf("no word of the stop:\n%s", d.log())
	}
	if _, err := http.Get("http://" + d.addr + "/metrics"); err == nil {
		t.Error("still serving after SIGTERM")
	}
	// SIGINT too, with nothing in flight.
	d = startDaemon(t, f.Env(""), "--load-cache", cache)
	d.cmd.Process.Signal(syscall.SIGINT)
	if err := d.wait(); err != nil {
		t.Errorf("after SIGINT: %v (want exit status 0)", err)
	}
}

// SIGHUP (systemctl reload) discovers the fabric again at once, long
// before --refresh would, and the daemon goes on serving.
func TestSIGHUPRediscovers(t *testing.T) {
	f := simfabric.StartOptsT(t, simfabric.Options{Topology: "tiny.net"})
	d := startDaemon(t, f.Env(""), "--refresh", "1h")
	url := "http://" + d.addr + "/metrics"
	first := scrapeValues(t, url)["ib_discovery_last_success_timestamp_seconds"]
	if first == 0 {
		t.Fatalf("no discovery before the signal:\n%s", d.log())
	}
	time.Sleep(20 * time.Millisecond) // a later discovery has a later time
	d.cmd.Process.Signal(syscall.SIGHUP)
	deadline := time.Now().Add(20 * time.Second)
	for scrapeValues(t, url)["ib_discovery_last_success_timestamp_seconds"] == first {
		if time.Now().After(deadline) {
			t.Fatalf("no discovery after SIGHUP:\n%s", d.log())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !strings.Contains(d.log(), "discovering the fabric again") {
		t.Errorf("no word of the SIGHUP:\n%s", d.log())
	}
	d.cmd.Process.Signal(syscall.SIGTERM)
	if err := d.wait(); err != nil {
		t.Errorf("after SIGHUP and SIGTERM: %v (want exit status 0)\n%s", err, d.log())
	}
}

// fabricCache writes f's ibnetdiscover cache (by the C tool), for an
// exporter that should not walk the fabric through a slow relay.
func fabricCache(t *testing.T, f *simfabric.Fabric) string {
	t.Helper()
	simfabric.RequireTools(t, "ibnetdiscover")
	cache := filepath.Join(t.TempDir(), "fabric.cache")
	if r := f.RunC(context.Background(), "", "ibnetdiscover", "--cache", cache); r.Code != 0 {
		t.Fatalf("ibnetdiscover --cache: %s", r)
	}
	return cache
}

// startRelay puts a relay with one-way latency in front of f (a Remote
// fabric) until the test ends.
func startRelay(t *testing.T, f *simfabric.Fabric, latency time.Duration) *simfabric.Relay {
	t.Helper()
	relay, err := simfabric.StartRelay(f, simfabric.RelayOptions{Latency: latency})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { relay.Close() })
	return relay
}

// daemon is the exporter running as a process on a simulated fabric.
type daemon struct {
	cmd    *exec.Cmd
	addr   string
	exited chan error
	mu     sync.Mutex
	stderr strings.Builder
}

func (d *daemon) log() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.stderr.String()
}

// wait waits for the daemon to end, at most a minute.
func (d *daemon) wait() error {
	select {
	case err := <-d.exited:
		return err
	case <-time.After(time.Minute):
		d.cmd.Process.Kill()
		return fmt.Errorf("still running a minute on: killed")
	}
}

// startDaemon starts the exporter binary with env (a fabric's), listening
// on a free loopback port unless args say where, and waits until it
// listens; the test's end stops it.
func startDaemon(t *testing.T, env []string, args ...string) *daemon {
	t.Helper()
	if !strings.Contains(strings.Join(args, " "), "listen-address") {
		args = append([]string{"--web.listen-address", "127.0.0.1:0"}, args...)
	}
	d := &daemon{cmd: exec.Command(exporterBinary(t), args...), exited: make(chan error, 1)}
	d.cmd.Env, d.cmd.Dir = env, t.TempDir()
	d.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	pipe, err := d.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	addrs := make(chan string, 1)
	go func() {
		buf := make([]byte, 4096)
		var line []byte
		for {
			n, err := pipe.Read(buf)
			d.mu.Lock()
			d.stderr.Write(buf[:n])
			d.mu.Unlock()
			line = append(line, buf[:n]...)
			for {
				i := bytes.IndexByte(line, '\n')
				if i < 0 {
					break
				}
				if a, ok := soak.ListenAddress(string(line[:i])); ok {
					select {
					case addrs <- a:
					default:
					}
				}
				line = line[i+1:]
			}
			if err != nil {
				break
			}
		}
		d.exited <- d.cmd.Wait()
	}()
	t.Cleanup(func() {
		if d.cmd.ProcessState == nil {
			d.cmd.Process.Signal(syscall.SIGTERM)
			d.wait()
		}
	})
	select {
	case d.addr = <-addrs:
		return d
	case err := <-d.exited:
		d.exited <- err
		t.Fatalf("the exporter ended before listening: %v\n%s", err, d.log())
	case <-time.After(2 * time.Minute):
		t.Fatalf("the exporter is not listening after 2 minutes:\n%s", d.log())
	}
	return nil
}

func requireBinary(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		simfabric.Missing(t, fmt.Errorf("%s not found (Debian package prometheus; make deps installs it): %v", name, err))
	}
	return p
}

// promtoolCheck runs the real `promtool check metrics` on a scrape.
func promtoolCheck(t *testing.T, metrics string) {
	t.Helper()
	cmd := exec.Command(requireBinary(t, "promtool"), "check", "metrics")
	cmd.Stdin = strings.NewReader(metrics)
	if out, err := cmd.CombinedOutput(); err != nil || len(out) > 0 {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
}

func grep(text string, prefixes ...string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		for _, p := range prefixes {
			if strings.HasPrefix(l, p) {
				out = append(out, l)
				break
			}
		}
	}
	return strings.Join(out, "\n")
}

// 50 scrapes at once on the simulated 200-node fabric send the MADs of
// one: they share the sweep in flight. The relay's latency keeps the
// sweep going while they arrive.
func TestConcurrentScrapesSendTheMADsOfOne(t *testing.T) {
	f := simfabric.StartOptsT(t, simfabric.Options{Topology: "fattree-200.net", Remote: true})
	cache := fabricCache(t, f)
	relay := startRelay(t, f, 30*time.Millisecond)
	d := startDaemon(t, relay.Env("node0002"), "--load-cache", cache)
	url := "http://" + d.addr + "/metrics"
	first := scrapeValues(t, url) // also reads every PMA's ClassPortInfo
	one := scrapeValues(t, url)
	perScrape := one["ib_exporter_mad_requests_total"] - first["ib_exporter_mad_requests_total"]
	if perScrape < one["ib_scrape_ports"] {
		t.Fatalf("one scrape sent %v MADs for %v ports", perScrape, one["ib_scrape_ports"])
	}

	const n = 50
	results := make([]map[string]float64, n)
	var wg sync.WaitGroup
	gate := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-gate
			results[i] = scrapeValues(t, url)
		})
	}
	close(gate)
	wg.Wait()
	var sent float64
	for i, r := range results {
		if r == nil {
			t.Fatalf("scrape %d failed", i)
		}
		sent = max(sent, r["ib_exporter_mad_requests_total"]-one["ib_exporter_mad_requests_total"])
		if r["ib_exporter_sweeps_total"] != one["ib_exporter_sweeps_total"]+1 || r["ib_scrape_complete"] != 1 {
			t.Errorf("scrape %d: sweep %v (want %v), complete %v", i, r["ib_exporter_sweeps_total"], one["ib_exporter_sweeps_total"]+1, r["ib_scrape_complete"])
		}
	}
	t.Logf("%d concurrent scrapes of %v ports sent %v MADs; one scrape %v", n, one["ib_scrape_ports"], sent, perScrape)
	if sent > perScrape {
		t.Errorf("%d concurrent scrapes sent %v MADs, one scrape %v", n, sent, perScrape)
	}
}

// scrapeValues scrapes url and returns the values of the series without
// labels, by name.
func scrapeValues(t *testing.T, url string) map[string]float64 {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Error(err)
		return nil
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("GET %s: %v %s", url, err, resp.Status)
		return nil
	}
	out := map[string]float64{}
	for _, line := range strings.Split(string(b), "\n") {
		name, value, ok := strings.Cut(line, " ")
		if !ok || strings.HasPrefix(line, "#") || strings.Contains(name, "{") {
			continue
		}
		var v float64
		if _, err := fmt.Sscan(value, &v); err == nil {
			out[name] = v
		}
	}
	return out
}

// --web.systemd-socket serves on the socket systemd passes (fd 3, with
// LISTEN_PID and LISTEN_FDS), as a .socket unit starts it.
func TestSystemdSocketActivation(t *testing.T) {
	f := simfabric.StartT(t, "tiny.net")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	lf, err := ln.(*net.TCPListener).File()
	ln.Close() // the child has its copy
	if err != nil {
		t.Fatal(err)
	}
	defer lf.Close()
	// exec keeps the shell's pid, which LISTEN_PID must name.
	cmd := exec.Command("sh", "-c", `LISTEN_PID=$$ LISTEN_FDS=1 exec "$0" --web.systemd-socket`, exporterBinary(t))
	cmd.Env, cmd.Dir = f.Env(""), t.TempDir()
	cmd.ExtraFiles = []*os.File{lf}
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		cmd.Process.Signal(syscall.SIGTERM)
		if err := <-exited; err != nil {
			t.Errorf("after SIGTERM: %v\n%s", err, stderr.String())
		}
	}()
	url := "http://" + ln.Addr().String() + "/metrics"
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
		if v := scrapeValues(t, url); v != nil {
			if v["ib_scrape_ports"] != tinyLinkedPorts {
				t.Errorf("ib_scrape_ports %v through the passed socket", v["ib_scrape_ports"])
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("nothing served on the passed socket:\n%s", stderr.String())
		}
	}
}
