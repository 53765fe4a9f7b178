package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ibtool/ibtool/internal/cli/cmd/exporter"
	"github.com/ibtool/ibtool/internal/cli/cmdutil"
	"github.com/ibtool/ibtool/internal/simfabric"
	"github.com/ibtool/ibtool/internal/umad"
)

// requireBinary finds a program the test needs: missing, the test skips,
// or fails under CI=true (make test installs it).
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

// tiny.net's linked ports: Switch1 1, 4, 8; sw2 1, 4; the three CAs' port 1.
const tinyLinkedPorts = 8

func TestExporterOnceAndTextfile(t *testing.T) {
	f := sharedFabric(t, "tiny.net")
	r := runSim(f, "", "exporter", "--once")
	if r.Code != 0 || r.Stderr != "" {
		t.Fatalf("exporter --once: exit %d, stderr %q", r.Code, r.Stderr)
	}
	promtoolCheck(t, r.Stdout)
	for _, want := range []string{
		fmt.Sprintf("ib_scrape_ports %d", tinyLinkedPorts),
		"ib_scrape_port_errors 0",
		`ib_port_link_info{lid="1",node_guid="0x0000000000200000",node_name="Switch1",port="8",remote_guid="0x0000000000200001",remote_name="sw2 desc",remote_port="4",speed="SDR",width="4X"} 1`,
		`ib_port_state{node_guid="0x0000000000200000",node_name="Switch1",port="2"} 1`, // a port without a link: Down
		`ib_port_link_rate_bytes_per_second{node_guid="0x0000000000100000",node_name="hca one",port="1"} 1.25e+09`,
		`ib_discovery_nodes{node_type="switch"} 2`,
	} {
		if !strings.Contains(r.Stdout, "\n"+want+"\n") {
			t.Errorf("--once output lacks %s", want)
		}
	}
	// Counters move with every MAD on ibsim: the switch port towards the
	// local host has carried at least this scrape's requests.
	if !strings.Contains(r.Stdout, `ib_port_transmit_data_bytes_total{node_guid="0x0000000000200000",node_name="Switch1",port="1"} `) ||
		strings.Contains(r.Stdout, `ib_port_transmit_data_bytes_total{node_guid="0x0000000000200000",node_name="Switch1",port="1"} 0`+"\n") {
		t.Errorf("Switch1 port 1 has not sent a byte?\n%s", grepLines(r.Stdout, "ib_port_transmit_data_bytes_total"))
	}

	dir := t.TempDir()
	file := filepath.Join(dir, "infiniband.prom")
	if r := runSim(f, "", "exporter", "--textfile", file); r.Code != 0 || r.Stdout != "" {
		t.Fatalf("exporter --textfile: exit %d, stdout %q, stderr %q", r.Code, r.Stdout, r.Stderr)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	promtoolCheck(t, string(b))
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("the textfile directory holds %d files, want only the renamed one", len(entries))
	}

	for _, args := range [][]string{{"--json"}, {"--refresh", "0s"}, {"now"}, {"--sa", "--discovery", "DR"}} {
		r := runSim(f, "", append([]string{"exporter", "--once"}, args...)...)
		if r.Code != cmdutil.ExitUsage || !strings.HasPrefix(r.Stderr, "exporter: ") {
			t.Errorf("exporter %v: exit %d, stderr %q; want a usage error", args, r.Code, r.Stderr)
		}
	}
}

// TestExporterScrapedByPrometheus runs the exporter as a server and a
// real Prometheus scraping it every second, and asks Prometheus' API for
// what it stored.
func TestExporterScrapedByPrometheus(t *testing.T) {
	f := sharedFabric(t, "tiny.net")
	prom := requireBinary(t, "prometheus")
	target := startExporter(t, f)

	dir := t.TempDir()
	promAddr := freeAddr(t)
	cfg := filepath.Join(dir, "prometheus.yml")
	os.WriteFile(cfg, []byte(fmt.Sprintf(`global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: ib
    static_configs:
      - targets: [%q]
`, target)), 0o644)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := exec.CommandContext(ctx, prom, "--config.file="+cfg, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+promAddr, "--log.level=warn")
	var promLog bytes.Buffer
	cmd.Stdout, cmd.Stderr = &promLog, &promLog
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); cmd.Wait() }()

	query := func(q string) []promSample {
		resp, err := http.Get("http://" + promAddr + "/api/v1/query?query=" + url.QueryEscape(q))
		if err != nil {
			return nil
		}
		defer resp.Body.Close()
		var r struct {
			Data struct{ Result []promSample }
		}
		json.NewDecoder(resp.Body).Decode(&r)
		return r.Data.Result
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if s := query(`ib_scrape_ports{job="ib"}`); len(s) == 1 && s[0].value() == fmt.Sprint(tinyLinkedPorts) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Prometheus stored no scrape of the exporter in 30 s; its log:\n%s", promLog.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
	if s := query(`up{job="ib"}`); len(s) != 1 || s[0].value() != "1" {
		t.Errorf("up: %+v", s)
	}
	s := query(`ib_port_link_info{node_name="Switch1",port="8"}`)
	if len(s) != 1 || s[0].Metric["remote_name"] != "sw2 desc" || s[0].Metric["remote_port"] != "4" {
		t.Errorf("link info of Switch1 port 8: %+v", s)
	}
	if s := query(`count(ib_port_receive_data_bytes_total)`); len(s) != 1 || s[0].value() != fmt.Sprint(tinyLinkedPorts) {
		t.Errorf("receive_data_bytes series: %+v", s)
	}
}

type promSample struct {
	Metric map[string]string
	Value  []any
}

func (s promSample) value() string {
	if len(s.Value) == 2 {
		v, _ := s.Value[1].(string)
		return v
	}
	return ""
}

// freeAddr is a loopback address with a port nobody listens on now.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// startExporter runs `ibtool exporter` in-process on f until the test
// ends, and returns the address it serves.
func startExporter(t *testing.T, f *simfabric.Fabric, args ...string) string {
	t.Helper()
	pr, pw := io.Pipe()
	env := &cmdutil.Env{
		IO:        cmdutil.IO{In: strings.NewReader(""), Out: io.Discard, Err: pw},
		Transport: umad.NewSim(umad.SimConfig{SockName: f.SockName()}),
	}
	cmd := exporter.NewCmd(env, "exporter")
	cmd.SetArgs(append([]string{"--listen-address", "127.0.0.1:0"}, args...))
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- cmd.ExecuteContext(ctx)
		pw.Close()
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("exporter: %v", err)
		}
	})
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		line := sc.Text()
		if _, rest, ok := strings.Cut(line, "http://"); ok {
			go io.Copy(io.Discard, pr) // later messages
			addr, _, _ := strings.Cut(rest, "/")
			return addr
		}
		t.Logf("exporter: %s", line)
	}
	t.Fatalf("the exporter ended before serving: %v", <-done)
	return ""
}

func grepLines(text, prefix string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
