package exporter

import (
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// get serves one request of the exporter's handler with Accept-Encoding
// acceptEncoding, and returns the response and its body as sent.
func get(t *testing.T, h http.Handler, acceptEncoding string) (*http.Response, []byte) {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	if acceptEncoding != "" {
		req.Header.Set("Accept-Encoding", acceptEncoding)
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

// The handler serves promhttp's text format, gzipped when the client
// accepts gzip (Prometheus does) and only then; both say the same.
func TestHandlerGzipWhenAsked(t *testing.T) {
	f := newTestFabric(t)
	e := f.exporter()
	if err := e.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	h := Handler(e)
	plainResp, plain := get(t, h, "")
	if enc := plainResp.Header.Get("Content-Encoding"); enc != "" || plainResp.StatusCode != http.StatusOK {
		t.Fatalf("plain scrape: status %d, Content-Encoding %q", plainResp.StatusCode, enc)
	}
	if ct := plainResp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		t.Errorf("Content-Type %q", ct)
	}
	wantLines(t, "\n"+string(plain), "ib_port_symbol_errors_total{"+swLabels+"} 8.589934592e+09")

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
		if !strings.HasPrefix(l, "ib_scrape_duration_seconds ") && !strings.HasPrefix(l, "ib_exporter_mads_total") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

// An error response goes out as it is, uncompressed, even to a client
// that accepts gzip.
func TestErrorResponseUncompressed(t *testing.T) {
	rec := httptest.NewRecorder()
	mw := newMetricsWriter(rec, true)
	http.Error(mw, "no metrics", http.StatusInternalServerError)
	mw.close()
	resp := rec.Result()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusInternalServerError || resp.Header.Get("Content-Encoding") != "" || string(body) != "no metrics\n" {
		t.Errorf("status %d, Content-Encoding %q, body %q", resp.StatusCode, resp.Header.Get("Content-Encoding"), body)
	}
}
