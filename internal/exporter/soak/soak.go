// Package soak runs ibtool-exporter on a simulated fabric for many
// scrapes while the fabric changes under it (links going down and up,
// OpenSM restarting), and reports what the exporter's process held over
// the run: goroutines, open files, heap and resident memory, from its own
// go_* and process_* metrics. The exporter's tests run it on a 200-node
// fabric; make soak (cmd/ibbench -soak) on the 2000-node one.
package soak

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/ibtool/ibtool/internal/simfabric"
)

// Config is one soak.
type Config struct {
	// Exporter is the ibtool-exporter binary.
	Exporter string
	Fabric   *simfabric.Fabric
	// Attach is the node the exporter attaches to ("" for the first).
	Attach string
	// Args are more exporter flags (--refresh ...).
	Args    []string
	Scrapes int
	// Flaps are the ports taken down and up in turn (`"node0010"[1]`),
	// one every FlapEvery scrapes, back up FlapEvery/2 scrapes later.
	Flaps     []string
	FlapEvery int
	// RestartEvery is how many scrapes apart OpenSM restarts (0: never);
	// the scrapes go on meanwhile.
	RestartEvery int
	// Timeout is each scrape's timeout, sent as Prometheus sends it.
	Timeout time.Duration
	// Samples is how many times the process' figures are recorded.
	Samples int
	// Log reports progress; nil for none.
	Log func(format string, args ...any)
}

// Sample is the exporter's process at one scrape.
type Sample struct {
	Scrape     int
	Goroutines float64
	OpenFDs    float64
	HeapInuse  float64 // bytes
	RSS        float64 // bytes
}

// Report is what a soak saw.
type Report struct {
	Scrapes    int
	Failed     int    // scrapes that failed outright: no answer, not 200, not the text format
	FirstFail  string // what the first failure was
	Incomplete int    // scrapes with ib_scrape_complete 0
	PortErrors int    // scrapes with ib_scrape_port_errors above 0
	Flaps      int
	Restarts   int
	Samples    []Sample
	// Durations are the scrapes' wall times, in order.
	Durations []time.Duration
	Took      time.Duration
	// ExitErr is how the exporter ended on SIGTERM: nil for status 0.
	ExitErr error
}

// Run runs the soak.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	logf := cfg.Log
	if logf == nil {
		logf = func(string, ...any) {}
	}
	addr, stop, err := startExporter(cfg)
	if err != nil {
		return nil, err
	}
	rep := &Report{}
	defer func() {
		if stop != nil {
			stop()
		}
	}()
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}, Timeout: cfg.Timeout + 5*time.Second}
	url := "http://" + addr + "/metrics"
	every := max(cfg.Scrapes/max(cfg.Samples, 1), 1)
	var restarts sync.WaitGroup
	var restartErr error
	restarting := false
	var mu sync.Mutex
	start := time.Now()
	down := ""
	for i := 1; i <= cfg.Scrapes && ctx.Err() == nil; i++ {
		if cfg.FlapEvery > 0 && len(cfg.Flaps) > 0 {
			switch i % cfg.FlapEvery {
			case 0:
				down = cfg.Flaps[(i/cfg.FlapEvery)%len(cfg.Flaps)]
				if _, err := cfg.Fabric.Console("Unlink " + down); err != nil {
					return rep, err
				}
				rep.Flaps++
			case cfg.FlapEvery / 2:
				if down != "" {
					if _, err := cfg.Fabric.Console("ReLink " + down); err != nil {
						return rep, err
					}
					down = ""
				}
			}
		}
		mu.Lock()
		busy := restarting
		mu.Unlock()
		if cfg.RestartEvery > 0 && i%cfg.RestartEvery == 0 && !busy {
			mu.Lock()
			restarting = true
			mu.Unlock()
			rep.Restarts++
			restarts.Go(func() {
				rctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
				defer cancel()
				err := cfg.Fabric.RestartOpenSM(rctx)
				mu.Lock()
				restarting = false
				restartErr = errors.Join(restartErr, err)
				mu.Unlock()
			})
		}
		sample := i%every == 0 || i == 1
		// Five scrapes are decoded whole, gzipped as Prometheus asks,
		// and parsed as it parses them; the others are read for the
		// figures only.
		full := i == 1 || i%max(cfg.Scrapes/4, 1) == 0
		samples, took, err := scrape(client, url, cfg.Timeout, full)
		rep.Durations = append(rep.Durations, took)
		rep.Scrapes++
		if err != nil {
			if rep.Failed == 0 {
				rep.FirstFail = fmt.Sprintf("scrape %d: %v", i, err)
			}
			rep.Failed++
			continue
		}
		if samples["ib_scrape_complete"] != 1 {
			rep.Incomplete++
		}
		if samples["ib_scrape_port_errors"] > 0 {
			rep.PortErrors++
		}
		if sample {
			s := Sample{Scrape: i, Goroutines: samples["go_goroutines"], OpenFDs: samples["process_open_fds"],
				HeapInuse: samples["go_memstats_heap_inuse_bytes"], RSS: samples["process_resident_memory_bytes"]}
			rep.Samples = append(rep.Samples, s)
			logf("scrape %d: %.0f goroutines, %.0f open files, heap %.1f MB, RSS %.1f MB; %d failed, %d incomplete",
				i, s.Goroutines, s.OpenFDs, s.HeapInuse/1e6, s.RSS/1e6, rep.Failed, rep.Incomplete)
		}
	}
	rep.Took = time.Since(start)
	restarts.Wait()
	if down != "" {
		cfg.Fabric.Console("ReLink " + down)
	}
	rep.ExitErr = stop()
	stop = nil
	return rep, restartErr
}

// scrape GETs the metrics with Prometheus' timeout header and returns
// the samples without labels by name; an error is a scrape that failed
// outright. With full it asks for gzip, as Prometheus does, and parses
// the whole body as Prometheus does; without, it takes the body plain and
// picks out the figures (decoding 2-30 MB a scrape, under the race
// detector, would make the soak measure the decoder).
func scrape(client *http.Client, url string, timeout time.Duration, full bool) (_ map[string]float64, took time.Duration, err error) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return nil, 0, err
	}
	if full {
		req.Header.Set("Accept-Encoding", "gzip")
	}
	req.Header.Set("X-Prometheus-Scrape-Timeout-Seconds", fmt.Sprint(timeout.Seconds()))
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		return nil, time.Since(start), err
	}
	defer resp.Body.Close()
	// The whole body first: decoding it is the soak's work, not the
	// exporter's, and must not count against the scrape's time.
	body, err := io.ReadAll(resp.Body)
	took = time.Since(start)
	if err != nil {
		return nil, took, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, took, fmt.Errorf("%s", resp.Status)
	}
	if !full {
		values, err := figures(body)
		return values, took, err
	}
	var text io.Reader = bytes.NewReader(body)
	if resp.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(text)
		if err != nil {
			return nil, took, err
		}
		text = zr
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	mfs, err := p.TextToMetricFamilies(text)
	if err != nil {
		return nil, took, fmt.Errorf("not the text format: %v", err)
	}
	out := map[string]float64{}
	for name, mf := range mfs {
		if len(mf.Metric) == 1 && len(mf.Metric[0].Label) == 0 {
			m := mf.Metric[0]
			switch {
			case m.Gauge != nil:
				out[name] = m.Gauge.GetValue()
			case m.Counter != nil:
				out[name] = m.Counter.GetValue()
			case m.Untyped != nil:
				out[name] = m.Untyped.GetValue()
			}
		}
	}
	return out, took, nil
}

// figureNames are the series a soak follows.
var figureNames = []string{"go_goroutines", "process_open_fds", "go_memstats_heap_inuse_bytes", "process_resident_memory_bytes",
	"ib_scrape_complete", "ib_scrape_port_errors"}

// figures finds the figureNames' values in a body, which must end with a
// whole line and have ib_scrape_complete (written last of all).
func figures(body []byte) (map[string]float64, error) {
	if !bytes.HasSuffix(body, []byte("\n")) {
		return nil, fmt.Errorf("a body of %d bytes that ends in the middle of a line", len(body))
	}
	out := map[string]float64{}
	for _, name := range figureNames {
		i := bytes.Index(body, []byte("\n"+name+" "))
		if i < 0 {
			continue
		}
		line := body[i+1:]
		line = line[:bytes.IndexByte(line, '\n')]
		v, err := strconv.ParseFloat(string(line[len(name)+1:]), 64)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", line, err)
		}
		out[name] = v
	}
	if _, ok := out["ib_scrape_complete"]; !ok {
		return nil, fmt.Errorf("a body of %d bytes without ib_scrape_complete", len(body))
	}
	return out, nil
}

// startExporter starts the exporter on a free loopback port and waits
// until it listens; stop sends it SIGTERM and returns how it ended.
func startExporter(cfg Config) (addr string, stop func() error, err error) {
	args := append([]string{"--web.listen-address", "127.0.0.1:0"}, cfg.Args...)
	cmd := exec.Command(cfg.Exporter, args...)
	cmd.Env, cmd.Dir = cfg.Fabric.Env(cfg.Attach), cfg.Fabric.Dir()
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return "", nil, err
	}
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	exited := make(chan error, 1)
	addrs := make(chan string, 1)
	var log strings.Builder
	var logMu sync.Mutex
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			logMu.Lock()
			log.WriteString(line + "\n")
			logMu.Unlock()
			if a, ok := ListenAddress(line); ok {
				select {
				case addrs <- a:
				default:
				}
			}
		}
		exited <- cmd.Wait()
	}()
	stop = func() error {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-exited:
			return err
		case <-time.After(time.Minute):
			cmd.Process.Kill()
			<-exited
			return errors.New("not stopped a minute after SIGTERM: killed")
		}
	}
	select {
	case addr = <-addrs:
		return addr, stop, nil
	case err := <-exited:
		logMu.Lock()
		defer logMu.Unlock()
		return "", nil, fmt.Errorf("the exporter ended before listening (%v):\n%s", err, log.String())
	case <-time.After(10 * time.Minute):
		stop()
		return "", nil, errors.New("the exporter is not listening after 10 minutes")
	}
}

// ListenAddress finds the address in exporter-toolkit's "Listening on"
// log line.
func ListenAddress(line string) (string, bool) {
	if !strings.Contains(line, "Listening on") {
		return "", false
	}
	_, rest, ok := strings.Cut(line, " address=")
	if !ok {
		return "", false
	}
	addr, _, _ := strings.Cut(rest, " ")
	return addr, addr != ""
}

// Percentile is the scrape wall time below which p (0..1) of them are.
func (r *Report) Percentile(p float64) time.Duration {
	if len(r.Durations) == 0 {
		return 0
	}
	d := slices.Clone(r.Durations)
	slices.Sort(d)
	return d[min(int(p*float64(len(d))), len(d)-1)]
}

// Flat compares a soak's samples after the warm-up (its first third,
// past the first tenth) with its last third: the highest of each figure.
type Flat struct {
	Goroutines, OpenFDs, HeapMB, RSSMB [2]float64 // after the warm-up, at the end
}

// Flatness is Flat of samples.
func Flatness(samples []Sample) Flat {
	var f Flat
	n := len(samples)
	if n == 0 {
		return f
	}
	warm := samples[max(n/10, 0):max(n/3, n/10+1)]
	end := samples[n-max(n/3, 1):]
	for i, part := range [][]Sample{warm, end} {
		for _, s := range part {
			f.Goroutines[i] = max(f.Goroutines[i], s.Goroutines)
			f.OpenFDs[i] = max(f.OpenFDs[i], s.OpenFDs)
			f.HeapMB[i] = max(f.HeapMB[i], s.HeapInuse/1e6)
			f.RSSMB[i] = max(f.RSSMB[i], s.RSS/1e6)
		}
	}
	return f
}

func (f Flat) String() string {
	return fmt.Sprintf("goroutines %.0f -> %.0f, open files %.0f -> %.0f, heap in use %.1f -> %.1f MB, RSS %.1f -> %.1f MB",
		f.Goroutines[0], f.Goroutines[1], f.OpenFDs[0], f.OpenFDs[1], f.HeapMB[0], f.HeapMB[1], f.RSSMB[0], f.RSSMB[1])
}

// Check fails when a figure grew: a few goroutines or files more (a
// scrape or a refresh in flight at the sample), or the heap up to twice
// (garbage not collected yet: the collector lets it double), are noise;
// more is a leak.
func (f Flat) Check() error {
	var errs []error
	if f.Goroutines[1] > f.Goroutines[0]+5 {
		errs = append(errs, fmt.Errorf("goroutines grew from %.0f to %.0f", f.Goroutines[0], f.Goroutines[1]))
	}
	if f.OpenFDs[1] > f.OpenFDs[0]+5 {
		errs = append(errs, fmt.Errorf("open files grew from %.0f to %.0f", f.OpenFDs[0], f.OpenFDs[1]))
	}
	if f.HeapMB[1] > 2*f.HeapMB[0]+2 {
		errs = append(errs, fmt.Errorf("the heap in use grew from %.1f to %.1f MB", f.HeapMB[0], f.HeapMB[1]))
	}
	return errors.Join(errs...)
}
