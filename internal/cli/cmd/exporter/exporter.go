package exporter

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/internal/cli/cmdutil"
	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/exporter"
	"github.com/ibtool/ibtool/internal/query"
)

// exporter: a Prometheus exporter of the fabric's port counters and links
// (internal/exporter), served over HTTP or written once for
// node_exporter's textfile collector. An ibtool command of its own.

type exporterOptions struct {
	cmdutil.Common
	src      query.Source
	listen   string
	path     string
	refresh  time.Duration
	once     bool
	textfile string
}

// DefaultExporterAddress is where the exporter listens by default.
const DefaultExporterAddress = ":9732"

// NewCmd builds the exporter command.
func NewCmd(env *cmdutil.Env, _ string) *cobra.Command {
	o := &exporterOptions{}
	cmd := &cobra.Command{
		Use:   "exporter [--listen-address ADDR] [--once] [--textfile FILE] [options]",
		Short: "Prometheus exporter of every port's counters and links",
		Long: `Serve the fabric's metrics to Prometheus on /metrics: the counters of every
linked port (64-bit PortCountersExtended where the PMA has them, data in bytes),
each port's state, width and rate and the node at the other end of its link, and
the scrape's own failures (ib_port_scrape_error, ib_scrape_port_errors: a lost
MAD is a metric, not a failed scrape). The fabric is discovered once (a walk, the
SA with --sa, or a cache with --load-cache) and again every --refresh; each
scrape reads every port's counters in one parallel fan-out.

--once prints one scrape in Prometheus' text format and exits; --textfile FILE
writes it to FILE atomically (a temporary file renamed), for node_exporter's
textfile collector (run it from cron or a timer).`,
		Example: `  ibtool exporter --listen-address :9732
  ibtool exporter --textfile /var/lib/prometheus/node-exporter/infiniband.prom
  ibtool exporter --once --load-cache fabric.cache | grep ib_port_link_downed_total`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return cmdutil.UsageErrorf("takes no arguments, got %q", args[0])
			}
			return nil
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&o.listen, "listen-address", DefaultExporterAddress, "address to serve /metrics on")
	fs.StringVar(&o.path, "telemetry-path", "/metrics", "URL path of the metrics")
	fs.DurationVar(&o.refresh, "refresh", 5*time.Minute, "how often the fabric is discovered again")
	fs.BoolVar(&o.once, "once", false, "print one scrape on stdout and exit")
	fs.StringVar(&o.textfile, "textfile", "", "write one scrape to this file (atomically) and exit")
	o.src.AddFlags(fs, query.AllSourceFlags)
	cmdutil.SetupCommon(env, cmd, &o.Common, "DGLsKe")
	// Every command lists --json; the exporter's output is Prometheus' format.
	fs.Lookup("json").Usage = "not for the exporter: it writes Prometheus' text format (a usage error)"
	cmd.RunE = func(c *cobra.Command, args []string) error {
		return cmdutil.Fail(env, &o.Common, "exporter", runExporter(c.Context(), env, o))
	}
	return cmd
}

func runExporter(ctx context.Context, env *cmdutil.Env, o *exporterOptions) error {
	c := &o.Common
	if c.JSON {
		return cmdutil.UsageErrorf("--json: the exporter writes Prometheus' text format")
	}
	if o.refresh <= 0 {
		return cmdutil.UsageErrorf("invalid --refresh %v: it must be positive", o.refresh)
	}
	if _, _, err := o.src.Mode(); err != nil {
		return cmdutil.UsageErrorf("%v", err)
	}
	o.src.MlxEPI = c.MlxEPI
	// The counters are read live even when the fabric comes from a cache.
	client, err := cmdutil.OpenClient(env, c, cmdutil.EngineConfig{Timeout: cmdutil.DefaultTimeoutMS * time.Millisecond, RetryCount: 2, Window: o.src.Window()})
	if err != nil {
		return err
	}
	defer client.Engine().Close()
	exp := exporter.New(exporter.Config{
		Client: client,
		Names:  o.src.Names(env.IO.Err),
		Discover: func(ctx context.Context) (*discovery.Fabric, error) {
			return o.src.Fabric(ctx, client, query.Walk{})
		},
	})
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()

	err = exp.Refresh(ctx)
	if o.once || o.textfile != "" {
		if err != nil {
			return err
		}
		return writeOnce(env, exp, o.textfile)
	}
	if err != nil {
		// Serve anyway: the failure is a metric, and the next refresh may
		// find the fabric (an SM that is not up yet).
		fmt.Fprintf(env.IO.Err, "exporter: %v; serving without a fabric until the next refresh\n", err)
	}
	return serveMetrics(ctx, env, o, exp)
}

// writeOnce writes one scrape to file (atomically), or to stdout.
func writeOnce(env *cmdutil.Env, exp *exporter.Exporter, file string) error {
	if file != "" {
		return prometheus.WriteToTextfile(file, exp)
	}
	mfs, err := exp.Gather()
	if err != nil {
		return err
	}
	enc := expfmt.NewEncoder(env.IO.Out, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, mf := range mfs {
		if err := enc.Encode(mf); err != nil {
			return err
		}
	}
	return nil
}

func serveMetrics(ctx context.Context, env *cmdutil.Env, o *exporterOptions, exp *exporter.Exporter) error {
	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle(o.path, exporter.Handler(exp))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprintf(w, "<html><head><title>ibtool exporter</title></head><body><a href=%q>Metrics</a></body></html>\n", o.path)
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go exp.Run(ctx, o.refresh, func(err error) { fmt.Fprintf(env.IO.Err, "exporter: refresh: %v\n", err) })
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(shutdown)
	}()
	fmt.Fprintf(env.IO.Err, "exporter: serving %s on http://%s%s\n", "metrics", ln.Addr(), o.path)
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
