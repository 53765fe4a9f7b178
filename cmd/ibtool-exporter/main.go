// Command ibtool-exporter is ibtool's Prometheus exporter, a daemon of
// its own (as node_exporter and opensm are): every port's counters, read
// at each scrape in one fan-out, and every link's state, width and rate,
// served over HTTP(S) by prometheus/exporter-toolkit, or written once for
// node_exporter's textfile collector. `ibtool exporter` runs it.
// docs/exporter.md describes its flags, metrics and deployment.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"runtime/debug"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/exporter-toolkit/web"
	"github.com/spf13/pflag"

	"github.com/ibtool/ibtool/internal/discovery"
	_ "github.com/ibtool/ibtool/internal/dynlibc" // a PIE that names libc, as Debian expects (see the package)
	"github.com/ibtool/ibtool/internal/endport"
	"github.com/ibtool/ibtool/internal/exitclean"
	"github.com/ibtool/ibtool/internal/exporter"
	"github.com/ibtool/ibtool/internal/exporter/cmdline"
	"github.com/ibtool/ibtool/internal/query"
	"github.com/ibtool/ibtool/internal/rpc"
	"github.com/ibtool/ibtool/internal/umad"
)

// version is set at build time (make build: git describe).
var version = ""

// Exit statuses: 0 also for a stop by SIGTERM or SIGINT, so that systemd
// sees a clean stop as one.
const (
	exitFailure = 1
	exitUsage   = 2
)

func main() {
	// No allocation sampling: nothing reads the profile.
	runtime.MemProfileRate = 0
	umad.LingerMain() // a helper finishing an abandoned simulator CONNECT
	// A signal, an error or a panic end through exitclean, which
	// disconnects simulator ports and removes a half-written textfile.
	// The daemon takes SIGTERM, SIGINT and SIGHUP itself (serve).
	exitclean.Install()
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(os.Stderr, "ibtool-exporter: internal error: %v\n%s", r, debug.Stack())
			exitclean.Exit(exitUsage)
		}
	}()
	exitclean.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr, umad.DefaultOpener()))
}

// run runs the exporter with args and returns its exit status. ctx ends
// the daemon as SIGTERM does (tests).
func run(ctx context.Context, args []string, stdout, stderr io.Writer, transport umad.Opener) int {
	o := &cmdline.Options{}
	fs := cmdline.New(o)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: ibtool-exporter [options]\n\n%s", fs.FlagUsages())
	}
	err := fs.Parse(args)
	if errors.Is(err, pflag.ErrHelp) {
		return 0
	}
	if err == nil && fs.NArg() > 0 {
		err = fmt.Errorf("takes no arguments, got %q", fs.Arg(0))
	}
	if err == nil {
		err = settle(o, fs)
	}
	if err != nil {
		fmt.Fprintf(stderr, "ibtool-exporter: %v\n", err)
		return exitUsage
	}
	if o.Version {
		fmt.Fprintf(stdout, "ibtool-exporter %s (%s)\n", buildVersion(), runtime.Version())
		return 0
	}
	if err := exportFabric(ctx, o, stdout, stderr, transport); err != nil {
		fmt.Fprintf(stderr, "ibtool-exporter: %v\n", err)
		return exitFailure
	}
	return 0
}

// exportFabric opens the local port, discovers the fabric and serves it
// (or writes one scrape).
func exportFabric(ctx context.Context, o *cmdline.Options, stdout, stderr io.Writer, transport umad.Opener) error {
	log := slog.New(slog.NewTextHandler(stderr, nil))
	if o.WebConfig != "" && !o.Once && o.Textfile == "" {
		// Before the discovery: a bad file is a mistake to hear of at once.
		if err := web.Validate(o.WebConfig); err != nil {
			return fmt.Errorf("--web.config.file %s: %v", o.WebConfig, err)
		}
	}
	client, err := openClient(o, transport)
	if err != nil {
		return err
	}
	defer client.Engine().Close()
	o.Src.MlxEPI = true // ibdiag.conf's default, as infiniband-diags 44 has it
	shard, _ := exporter.ParseShard(o.Shard)
	if o.Shard == "" {
		shard = exporter.Shard{}
	}
	mad, _ := timeoutMS(o)
	exp := exporter.New(exporter.Config{
		Client:  client,
		Names:   o.Src.Names(stderr),
		Timeout: mad,
		Collect: o.Collect,
		Shard:   shard,
		Version: buildVersion(),
		Discover: func(ctx context.Context) (*discovery.Fabric, error) {
			// No chassis grouping and no SwitchInfo: no metric has them.
			return o.Src.Fabric(ctx, client, query.Walk{NoChassis: true, Skip: discovery.LoadSwitchInfo})
		},
	})
	extra := prometheus.NewRegistry()
	if o.GoMetrics {
		extra.MustRegister(collectors.NewGoCollector())
	}
	if o.ProcessMetrics {
		extra.MustRegister(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}

	if o.Once || o.Textfile != "" {
		if err := exp.Refresh(ctx); err != nil {
			return err
		}
		res := exp.Scrape(ctx)
		if o.Textfile != "" {
			return exp.WriteFile(o.Textfile, res, extra)
		}
		return exp.Write(stdout, res, extra)
	}

	// SIGTERM and SIGINT stop the daemon cleanly: no more scrapes taken,
	// those in flight answered, status 0.
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	sigs := make(chan os.Signal, 1)
	defer exitclean.Forward(sigs)()
	go func() {
		select {
		case sig := <-sigs:
			log.Info("stopping", "signal", sig.String())
			stop()
		case <-ctx.Done():
		}
	}()
	// SIGHUP (systemctl reload) discovers the fabric again now, as after
	// a change to it; the web config file is read anew by every
	// connection already.
	rediscover := make(chan struct{}, 1)
	hangups := make(chan os.Signal, 1)
	defer exitclean.ForwardHangup(hangups)()
	go func() {
		for {
			select {
			case <-hangups:
				log.Info("discovering the fabric again", "signal", "hangup")
				select {
				case rediscover <- struct{}{}:
				default: // one is pending already
				}
			case <-ctx.Done():
				return
			}
		}
	}()
	if err := exp.Refresh(ctx); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		// Serve anyway: the failure is a metric, and the next refresh may
		// find the fabric (an SM that is not up yet).
		log.Warn("no fabric until the next refresh", "err", err, "refresh", o.Refresh)
	}
	return exporter.Serve(ctx, exp, exporter.ServeConfig{
		Web:           &web.FlagConfig{WebListenAddresses: &o.Listen, WebSystemdSocket: &o.Systemd, WebConfigFile: &o.WebConfig},
		Path:          o.Path,
		Handler:       exporter.HandlerOpts{Extra: extra, TimeoutOffset: o.Offset, MaxTimeout: o.MaxTimeout},
		Refresh:       o.Refresh,
		Rediscover:    rediscover,
		ShutdownGrace: o.MaxTimeout + 5*time.Second,
		Log:           log,
	})
}

// openClient opens the local port -C/-P choose and the MAD engine on it.
// Without them the transport picks its default port itself, which spares
// the simulator a second connection.
func openClient(o *cmdline.Options, transport umad.Opener) (*query.Client, error) {
	local := endport.Local{Port: -1}
	if o.CA != "" || o.Port != "" {
		cas, err := transport.CAs()
		var skipped umad.CAErrors
		if err != nil && !(errors.As(err, &skipped) && len(cas) > 0) {
			return nil, err // a broken CA must not hide the good ones
		}
		if local, err = endport.SelectLocal(cas, o.CA, o.Port); err != nil {
			return nil, err
		}
	}
	port, err := transport.Open(local.CA, local.Port)
	if err != nil {
		return nil, fmt.Errorf("can't open UMAD port (%s:%d): %w", local.CA, max(local.Port, 0), err)
	}
	timeout, _ := timeoutMS(o)
	eng := rpc.New(port, rpc.Options{Timeout: timeout, Retries: o.Retries, Window: o.Src.Window()})
	var qo query.Options
	qo.MKey, _ = endport.ParseUint(o.MKey, 64)
	qo.PKeyIndex = uint16(o.PKeyIdx)
	return query.New(eng, qo), nil
}

// buildVersion is the version make build stamps, else the module's.
func buildVersion() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "unknown"
}
