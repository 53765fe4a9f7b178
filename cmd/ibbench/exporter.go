package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The exporter row: ibtool-exporter serving the fabric, scraped over
// HTTP as Prometheus scrapes it. Issue 14's target is one scrape of
// every port of the 2000-node fabric in under 1 s; issue 27's, a steady
// RSS of at most 80 MB there, and concurrent scrapes that send the MADs
// of one.

// exporterTarget is the longest a scrape may take, exporterRSSTarget the
// most the exporter may hold.
const (
	exporterTarget    = time.Second
	exporterRSSTarget = 80 << 10 // KiB
)

// concurrentScrapes is how many scrapes arrive at once in the row's
// last measurement.
const concurrentScrapes = 50

// scrape is one GET of /metrics.
type scrape struct {
	wall   time.Duration
	bytes  int64   // the body as sent (compressed for a gzip scrape)
	series int     // sample lines of the decoded body
	reads  float64 // ib_scrape_duration_seconds: the counter reads inside the scrape
	mads   int64
	cpu    time.Duration // the exporter's CPU time (user and system) during the scrape
}

// exporterRow is the exporter on one fabric: plain and gzip scrapes.
type exporterRow struct {
	fabric  string
	plain   []scrape
	gzipped []scrape
	rssKB   int64 // the exporter's peak RSS after all scrapes
	// steadyKB is its RSS after the timed scrapes (VmRSS): what it holds
	// between scrapes.
	steadyKB int64
	// concurrentMADs are the MADs concurrentScrapes scrapes at once sent.
	concurrentMADs int64
	failed         string
}

// exporterRow starts the exporter at the bench host, waits for its first
// discovery and scrape (which also reads each PMA's ClassPortInfo, once),
// then times cfg.runs plain and gzip scrapes, alternating.
func (b *bencher) exporterRow(fabric string) exporterRow {
	r := exporterRow{fabric: fabric}
	if err := b.scrapeExporter(&r); err != nil {
		r.failed = err.Error()
	}
	return r
}

func (b *bencher) scrapeExporter(r *exporterRow) error {
	addr, err := freeAddress()
	if err != nil {
		return err
	}
	cmd := exec.Command(b.cfg.exporter, "--web.listen-address", addr)
	cmd.Env, cmd.Dir = b.fab.Env(attach), b.fab.Dir()
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
	}()
	url := "http://" + addr + "/metrics"
	// It listens once the first discovery is done.
	if err := waitListening(addr, exited, 5*time.Minute); err != nil {
		return fmt.Errorf("exporter: %v: %s", err, firstLine(errOut.String()))
	}
	if _, err := getMetrics(url, false); err != nil {
		return err
	}
	for i := range 2 * b.cfg.runs {
		gz := i%2 == 1
		before := b.xmitPkts()
		cpu := processCPU(cmd.Process.Pid)
		s, err := getMetrics(url, gz)
		if err != nil {
			return err
		}
		s.cpu = processCPU(cmd.Process.Pid) - cpu
		s.mads = b.xmitPkts() - before - b.probeCost
		if gz {
			r.gzipped = append(r.gzipped, s)
		} else {
			r.plain = append(r.plain, s)
		}
	}
	r.steadyKB = procStatusKB(cmd.Process.Pid, "VmRSS")
	before := b.xmitPkts()
	errs := make(chan error, concurrentScrapes)
	for range concurrentScrapes {
		go func() {
			_, err := getMetrics(url, false)
			errs <- err
		}()
	}
	for range concurrentScrapes {
		if err := <-errs; err != nil {
			return fmt.Errorf("%d scrapes at once: %v", concurrentScrapes, err)
		}
	}
	r.concurrentMADs = b.xmitPkts() - before - b.probeCost
	r.rssKB = procStatusKB(cmd.Process.Pid, "VmHWM")
	return nil
}

// freeAddress is a loopback address with a port free a moment ago.
func freeAddress() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

func waitListening(addr string, exited <-chan error, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		select {
		case err := <-exited:
			return fmt.Errorf("exited before serving: %v", err)
		default:
		}
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("not serving after %v", timeout)
}

// noGzip is an HTTP client that sends the Accept-Encoding it is given and
// decompresses nothing itself.
var noGzip = &http.Client{Transport: &http.Transport{DisableCompression: true}}

// getMetrics times one scrape: the GET and reading the whole body, as
// sent; the body is decoded and counted after the clock stops.
func getMetrics(url string, gz bool) (scrape, error) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return scrape{}, err
	}
	if gz {
		req.Header.Set("Accept-Encoding", "gzip")
	}
	start := time.Now()
	resp, err := noGzip.Do(req)
	if err != nil {
		return scrape{}, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	s := scrape{wall: time.Since(start), bytes: int64(len(body))}
	if err != nil {
		return s, err
	}
	if resp.StatusCode != http.StatusOK {
		return s, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	if enc := resp.Header.Get("Content-Encoding"); gz != (enc == "gzip") {
		return s, fmt.Errorf("GET %s with gzip %v: Content-Encoding %q", url, gz, enc)
	}
	if gz {
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			return s, err
		}
		if body, err = io.ReadAll(zr); err != nil {
			return s, err
		}
	}
	s.series, s.reads, err = scrapeStats(body)
	return s, err
}

// scrapeStats counts the series of a scrape in Prometheus' text format
// and finds ib_scrape_duration_seconds; a scrape without it is no
// exporter's.
func scrapeStats(text []byte) (series int, reads float64, err error) {
	found := false
	sc := bufio.NewScanner(bytes.NewReader(text))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		series++
		if v, ok := strings.CutPrefix(line, "ib_scrape_duration_seconds "); ok {
			if reads, err = strconv.ParseFloat(v, 64); err != nil {
				return 0, 0, fmt.Errorf("ib_scrape_duration_seconds %q: %v", v, err)
			}
			found = true
		}
	}
	if err := sc.Err(); err != nil {
		return 0, 0, err
	}
	if !found {
		return 0, 0, errors.New("the scrape has no ib_scrape_duration_seconds")
	}
	return series, reads, nil
}

// procStatusKB is a field of a running process's /proc/PID/status in
// KiB (VmRSS its resident set, VmHWM its peak), 0 if unknown.
func procStatusKB(pid int, field string) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

// processCPU is a process's CPU time so far (user and system), from
// /proc/PID/stat; 0 if unknown. Unlike wall time, it hardly depends on
// what else the machine runs.
func processCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	return cpuOfStat(string(b))
}

// cpuOfStat is utime+stime of a /proc/PID/stat line (fields 14 and 15,
// after the command name, which may hold spaces and parentheses).
func cpuOfStat(stat string) time.Duration {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(stat[i+1:])
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * time.Second / clockTicks
}

// clockTicks is USER_HZ, the unit of /proc's CPU times: 100 on Linux.
const clockTicks = 100

// exporterTable is the exporters' table, one line per kind of scrape.
func exporterTable(rows []exporterRow) string {
	if len(rows) == 0 {
		return ""
	}
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	p("\nThe exporter: ibtool-exporter at the bench host after its first discovery and scrape, scraped over HTTP (the whole body read; gzip: Accept-Encoding gzip, as Prometheus asks, the compressed body read). Wall time median and range, the counter reads inside the scrape (ib_scrape_duration_seconds, median), the exporter's CPU time per scrape (median: unlike wall time, it hardly depends on the machine's load), the body's size and series, MADs per scrape (median), the MADs of %d scrapes sent at once (they share one sweep), the exporter's steady RSS (VmRSS after the timed scrapes) and its peak RSS (after the %d at once). Targets: a scrape under %g s (issue 14), a steady RSS of at most %d MB (issue 27).\n\n",
		concurrentScrapes, concurrentScrapes, exporterTarget.Seconds(), exporterRSSTarget>>10)
	p("| fabric | scrape | wall time | counter reads | CPU | body | series | MADs | MADs, %d at once | steady RSS | peak RSS | under %g s | RSS under %d MB |\n",
		concurrentScrapes, exporterTarget.Seconds(), exporterRSSTarget>>10)
	p("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		if r.failed != "" {
			p("| %s | - | failed: %s | | | | | | | | | | |\n", r.fabric, strings.ReplaceAll(r.failed, "|", "/"))
			continue
		}
		for _, k := range []struct {
			name string
			ss   []scrape
		}{{"plain", r.plain}, {"gzip", r.gzipped}} {
			if len(k.ss) == 0 {
				continue
			}
			w := values(k.ss, func(s scrape) float64 { return s.wall.Seconds() })
			med := w[len(w)/2]
			p("| %s | %s | %.3f s (%.3f-%.3f) | %.3f s | %.2f s | %s | %d | %s | %s | %s | %s | %s | %s |\n", r.fabric, k.name, med, w[0], w[len(w)-1],
				median(k.ss, func(s scrape) float64 { return s.reads }),
				median(k.ss, func(s scrape) float64 { return s.cpu.Seconds() }),
				sizeText(median(k.ss, func(s scrape) float64 { return float64(s.bytes) })),
				k.ss[0].series, count(median(k.ss, func(s scrape) float64 { return float64(s.mads) })),
				count(float64(r.concurrentMADs)), mb(float64(r.steadyKB)), mb(float64(r.rssKB)),
				yesNo(med < exporterTarget.Seconds()), yesNo(r.steadyKB <= exporterRSSTarget))
		}
	}
	return b.String()
}

func (r exporterRow) summary() string {
	if r.failed != "" {
		return fmt.Sprintf("%s exporter: failed: %s", r.fabric, r.failed)
	}
	return fmt.Sprintf("%s exporter: plain %.3f s, gzip %.3f s (medians); steady RSS %s, %d at once sent %d MADs", r.fabric,
		median(r.plain, func(s scrape) float64 { return s.wall.Seconds() }),
		median(r.gzipped, func(s scrape) float64 { return s.wall.Seconds() }),
		mb(float64(r.steadyKB)), concurrentScrapes, r.concurrentMADs)
}

// sizeText is a byte count in MB or kB.
func sizeText(n float64) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%.1f MB", n/(1<<20))
	}
	return fmt.Sprintf("%.0f kB", n/(1<<10))
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
