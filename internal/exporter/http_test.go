package exporter

import (
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// get serves one request of h with Accept-Encoding acceptEncoding and
// more headers, and returns the response and its body as sent.
func get(t *testing.T, h http.Handler, acceptEncoding string, headers ...string) (*http.Response, []byte) {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	if acceptEncoding != "" {
		req.Header.Set("Accept-Encoding", acceptEncoding)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	resp := rec.Result()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

var testOpts = HandlerOpts{TimeoutOffset: 500 * time.Millisecond, MaxTimeout: 30 * time.Second}

// The handler serves the text format, gzipped when the client accepts
// gzip (Prometheus does) and only then; both say the same.
func TestHandlerGzipWhenAsked(t *testing.T) {
	f := newTestFabric(t)
	h := Handler(f.refreshed(t, allCollectors), testOpts)
	plainResp, plain := get(t, h, "")
	if enc := plainResp.Header.Get("Content-Encoding"); enc != "" || plainResp.StatusCode != http.StatusOK {
		t.Fatalf("plain scrape: status %d, Content-Encoding %q", plainResp.StatusCode, enc)
	}
	if ct := plainResp.Header.Get("Content-Type"); ct != ContentType {
		t.Errorf("Content-Type %q", ct)
	}
	wantLines(t, string(plain), "ib_port_symbol_error_total{"+swLabels+"} 8589934592")

	for _, accept := range []string{"gzip", "deflate, gzip;q=0.5", "GZIP"} {
		resp, body := get(t, h, accept)
		if enc := resp.Header.Get("Content-Encoding"); enc != "gzip" {
			t.Errorf("Accept-Encoding %q: Content-Encoding %q", accept, enc)
			continue
		}
		zr, err := gzip.NewReader(strings.NewReader(string(body)))
		if err != nil {
			t.Fatal(err)
		}
		text, err := io.ReadAll(zr)
		if err != nil {
			t.Fatal(err)
		}
		if drop := dropScrapeTimes(string(text)); drop != dropScrapeTimes(string(plain)) {
			t.Errorf("Accept-Encoding %q: the gzipped scrape says something else:\n%s\nplain:\n%s", accept, drop, dropScrapeTimes(string(plain)))
		}
	}
	for _, accept := range []string{"gzip;q=0", "gzip; q=0.0", "deflate", "identity"} {
		if resp, _ := get(t, h, accept); resp.Header.Get("Content-Encoding") != "" {
			t.Errorf("Accept-Encoding %q: compressed", accept)
		}
	}
}

// dropScrapeTimes leaves out what changes from scrape to scrape.
func dropScrapeTimes(text string) string {
	var keep []string
	for _, l := range strings.Split(text, "\n") {
		if !strings.HasPrefix(l, "ib_scrape_duration_seconds ") && !strings.HasPrefix(l, "ib_exporter_") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

// The scrape ends by Prometheus' timeout less the offset kept for the
// response: with the PMAs silent, a 1 s timeout gets an answer (complete
// 0) in about half a second.
func TestHandlerHonoursScrapeTimeout(t *testing.T) {
	f := newTestFabric(t)
	e := f.refreshed(t, allCollectors)
	scrape(t, e)
	release := f.hold()
	defer release()
	start := time.Now()
	resp, body := get(t, Handler(e, testOpts), "", "X-Prometheus-Scrape-Timeout-Seconds", "1")
	took := time.Since(start)
	if resp.StatusCode != http.StatusOK || took < 400*time.Millisecond || took > 900*time.Millisecond {
		t.Errorf("status %d after %v; want 200 after about 500 ms", resp.StatusCode, took)
	}
	wantLines(t, string(body), "ib_scrape_complete 0")
	for header, want := range map[string]time.Duration{
		"":     testOpts.MaxTimeout - testOpts.TimeoutOffset,
		"10":   9500 * time.Millisecond,
		"0.4":  200 * time.Millisecond, // shorter than the offset: half
		"120":  testOpts.MaxTimeout - testOpts.TimeoutOffset,
		"junk": testOpts.MaxTimeout - testOpts.TimeoutOffset,
	} {
		req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
		req.Header.Set("X-Prometheus-Scrape-Timeout-Seconds", header)
		if got := scrapeTimeout(req, testOpts); got != want {
			t.Errorf("timeout header %q: scrape timeout %v, want %v", header, got, want)
		}
	}
}

// The Go runtime's and the process' collectors come first, checked by
// promtool with the rest.
func TestExtraCollectors(t *testing.T) {
	f := newTestFabric(t)
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	_, body := get(t, Handler(f.refreshed(t, allCollectors), HandlerOpts{Extra: reg, MaxTimeout: time.Minute}), "")
	text := string(body)
	checkText(t, text)
	promtoolCheck(t, text)
	for _, want := range []string{"\ngo_goroutines ", "\nprocess_open_fds ", "\nib_scrape_complete 1\n"} {
		if !strings.Contains(text, want) {
			t.Errorf("no %q", strings.TrimSpace(want))
		}
	}
}

// The textfile is replaced whole, readable by node_exporter, with no
// temporary file left.
func TestWriteFile(t *testing.T) {
	f := newTestFabric(t)
	e := f.refreshed(t, allCollectors)
	dir := t.TempDir()
	name := filepath.Join(dir, "infiniband.prom")
	os.WriteFile(name, []byte("old\n"), 0o600)
	if err := e.WriteFile(name, e.Scrape(t.Context()), nil); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	checkText(t, string(b))
	wantLines(t, string(b), "ib_scrape_complete 1")
	if st, _ := os.Stat(name); st.Mode().Perm() != 0o644 {
		t.Errorf("mode %v", st.Mode())
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("the directory holds %d files, want only the renamed one", len(entries))
	}
	if err := e.WriteFile(filepath.Join(dir, "no", "such", "dir"), e.Scrape(t.Context()), nil); err == nil {
		t.Error("a file in a missing directory: no error")
	}
}
