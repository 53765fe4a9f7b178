package exporter

import (
	"bufio"
	"compress/gzip"
	"net/http"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Handler serves g's metrics through client_golang's promhttp handler
// (format negotiation, encoding), with two changes that matter for a
// 2000-node fabric's 30 MB scrape:
//
//   - the response goes through a 256 KiB buffer: promhttp's encoder and
//     net/http otherwise write it in 4 KiB chunks, 7 500 system calls a
//     scrape;
//   - gzip, when the client asks for it (Prometheus does), compresses at
//     gzip.BestSpeed: promhttp's default level takes 4 times as long
//     (180 ms against 50 ms for S2000) for a body 5% smaller.
func Handler(g prometheus.Gatherer) http.Handler {
	h := promhttp.HandlerFor(g, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError, DisableCompression: true})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Add("Vary", "Accept-Encoding")
		mw := newMetricsWriter(w, acceptsGzip(r))
		defer mw.close()
		h.ServeHTTP(mw, r)
	})
}

// acceptsGzip says whether the request's Accept-Encoding lists gzip
// without q=0.
func acceptsGzip(r *http.Request) bool {
	for _, v := range r.Header.Values("Accept-Encoding") {
		for enc := range strings.SplitSeq(v, ",") {
			name, params, _ := strings.Cut(enc, ";")
			if strings.EqualFold(strings.TrimSpace(name), "gzip") && !zeroQ(params) {
				return true
			}
		}
	}
	return false
}

func zeroQ(params string) bool {
	q, ok := strings.CutPrefix(strings.ReplaceAll(params, " ", ""), "q=")
	return ok && strings.Trim(q, "0.") == ""
}

const responseBuffer = 256 << 10

var (
	bufPool  = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, responseBuffer) }}
	gzipPool = sync.Pool{New: func() any { w, _ := gzip.NewWriterLevel(nil, gzip.BestSpeed); return w }}
)

// metricsWriter is the response as promhttp sees it: buffered, and
// gzipped if asked, from the first byte written with status 200. It has
// WriteString and WriteByte, so promhttp's text encoder writes into its
// buffer directly.
type metricsWriter struct {
	http.ResponseWriter
	gzip    bool
	started bool
	buf     *bufio.Writer // what promhttp writes to
	gz      *gzip.Writer  // between buf and the response, if compressing
}

func newMetricsWriter(w http.ResponseWriter, gzip bool) *metricsWriter {
	return &metricsWriter{ResponseWriter: w, gzip: gzip}
}

// WriteHeader sends the status; a response that is no 200 (an error
// message) goes uncompressed.
func (m *metricsWriter) WriteHeader(code int) {
	if !m.started {
		m.start(code)
	}
}

func (m *metricsWriter) start(code int) {
	m.started = true
	var out http.ResponseWriter = m.ResponseWriter
	if m.gzip && code == http.StatusOK {
		m.Header().Set("Content-Encoding", "gzip")
		m.Header().Del("Content-Length")
		m.gz = gzipPool.Get().(*gzip.Writer)
		m.gz.Reset(out)
	}
	out.WriteHeader(code)
	m.buf = bufPool.Get().(*bufio.Writer)
	if m.gz != nil {
		m.buf.Reset(m.gz)
	} else {
		m.buf.Reset(out)
	}
}

func (m *metricsWriter) Write(b []byte) (int, error) {
	if !m.started {
		m.start(http.StatusOK)
	}
	return m.buf.Write(b)
}

func (m *metricsWriter) WriteString(s string) (int, error) {
	if !m.started {
		m.start(http.StatusOK)
	}
	return m.buf.WriteString(s)
}

func (m *metricsWriter) WriteByte(c byte) error {
	if !m.started {
		m.start(http.StatusOK)
	}
	return m.buf.WriteByte(c)
}

func (m *metricsWriter) WriteRune(r rune) (int, error) {
	if !m.started {
		m.start(http.StatusOK)
	}
	return m.buf.WriteRune(r)
}

// close flushes what is buffered and returns the writers to their pools.
func (m *metricsWriter) close() {
	if !m.started {
		return
	}
	m.buf.Flush()
	m.buf.Reset(nil)
	bufPool.Put(m.buf)
	if m.gz != nil {
		m.gz.Close()
		m.gz.Reset(nil)
		gzipPool.Put(m.gz)
	}
}
