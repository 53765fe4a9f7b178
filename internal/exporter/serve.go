package exporter

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/exporter-toolkit/web"
)

// ServeConfig is how the exporter serves its metrics.
type ServeConfig struct {
	// Web is exporter-toolkit's: the listen addresses (or systemd's
	// sockets) and the web config file (TLS, client certificates, basic
	// auth), as every exporter on the toolkit takes them.
	Web *web.FlagConfig
	// Path is the metrics' URL path.
	Path    string
	Handler HandlerOpts
	// Refresh is how often the fabric is discovered again.
	Refresh time.Duration
	// Rediscover discovers the fabric again at once on each receive (the
	// daemon's SIGHUP); nil for never.
	Rediscover <-chan struct{}
	// ShutdownGrace bounds how long a stop waits for scrapes in flight.
	ShutdownGrace time.Duration
	Log           *slog.Logger
}

// Serve serves e's metrics until ctx ends, refreshing its discovery on
// the interval; then it stops listening, lets the scrapes in flight end
// (within ShutdownGrace) and returns nil. An error is one of the web side
// (an address in use, a bad web config file).
func Serve(ctx context.Context, e *Exporter, cfg ServeConfig) error {
	mux := http.NewServeMux()
	h := cfg.Handler
	h.Log = func(err error) { cfg.Log.Debug("writing a scrape", "err", err) }
	mux.Handle(cfg.Path, Handler(e, h))
	if cfg.Path != "/" {
		landing, err := web.NewLandingPage(web.LandingConfig{
			Name:        "ibtool-exporter",
			Description: "Prometheus exporter of an InfiniBand fabric's port counters and links",
			Version:     e.cfg.Version,
			Links:       []web.LandingLinks{{Address: cfg.Path, Text: "Metrics"}},
		})
		if err != nil {
			return err
		}
		mux.Handle("/", landing)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}

	// On an error of the web side, stop what runs for it too.
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	go e.Run(ctx, cfg.Refresh, cfg.Rediscover, func(err error) { cfg.Log.Warn("refresh failed; the previous discovery stays", "err", err) })

	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		<-ctx.Done()
		grace, cancel := context.WithTimeout(context.Background(), cfg.ShutdownGrace)
		defer cancel()
		// Shutdown closes the listeners at once and returns when every
		// request in flight has been answered.
		if err := srv.Shutdown(grace); err != nil {
			cfg.Log.Warn("stopping: scrapes still running after the grace period", "err", err)
		}
	}()
	err := web.ListenAndServe(srv, cfg.Web, cfg.Log)
	if !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	<-stopped
	return nil
}
