package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/ibtool/ibtool/internal/endport"
	"github.com/ibtool/ibtool/internal/exporter"
	"github.com/ibtool/ibtool/internal/query"
)

// DefaultAddress is where the exporter listens by default: 9315, the
// port Prometheus' list of default ports gives InfiniBand metrics (and
// treydock/infiniband_exporter uses), so firewalls and scrape configs
// already open for it need no change.
const DefaultAddress = ":9315"

// options are the command line.
type options struct {
	// The web side, as every exporter on prometheus/exporter-toolkit
	// names it.
	listen     []string
	path       string
	webConfig  string
	systemd    bool
	oldListen  string // --listen-address: old names, hidden, for one release
	oldPath    string // --telemetry-path
	offset     time.Duration
	maxTimeout time.Duration

	collect    exporter.Collectors
	goMetrics  bool
	procMetric bool
	shard      string

	// The fabric: where it comes from, through which port, how often.
	src      query.Source
	ca, port string
	timeout  string // -t, in ms as the C tools take it
	retries  int
	mkey     string
	pkeyIdx  int
	refresh  time.Duration
	once     bool
	textfile string
	version  bool
}

// collectorFlag is one --collector.NAME switch.
type collectorFlag struct {
	name, usage string
	on          func(o *options) *bool
	def         bool
}

var collectorFlags = []collectorFlag{
	{"counters", "every linked port's PortCounters and PortCountersExtended, read at each scrape", func(o *options) *bool { return &o.collect.Counters }, true},
	{"links", "each port's state, width, rate and far end, and the nodes (from the discovery: no MAD per scrape)", func(o *options) *bool { return &o.collect.Links }, true},
	{"error-details", "PortRcvErrorDetails of every linked port (one more MAD per port and scrape)", func(o *options) *bool { return &o.collect.ErrorDetails }, false},
	{"go", "the Go runtime's go_* metrics", func(o *options) *bool { return &o.goMetrics }, true},
	{"process", "the process' process_* metrics (CPU, memory, open files)", func(o *options) *bool { return &o.procMetric }, true},
}

// newFlags is the exporter's flag set, filling o.
func newFlags(o *options) *pflag.FlagSet {
	fs := pflag.NewFlagSet("ibtool-exporter", pflag.ContinueOnError)
	fs.SortFlags = false
	fs.StringArrayVar(&o.listen, "web.listen-address", []string{DefaultAddress}, "address to listen on for scrapes; repeat it for several (vsock://:PORT for a vsock)")
	fs.StringVar(&o.path, "web.telemetry-path", "/metrics", "URL path of the metrics")
	fs.StringVar(&o.webConfig, "web.config.file", "", "exporter-toolkit web config: TLS, client certificates, basic auth (see docs/exporter.md)")
	fs.BoolVar(&o.systemd, "web.systemd-socket", false, "listen on the sockets systemd passes (socket activation) instead of --web.listen-address")
	fs.StringVar(&o.oldListen, "listen-address", "", "old name of --web.listen-address")
	fs.StringVar(&o.oldPath, "telemetry-path", "", "old name of --web.telemetry-path")
	fs.MarkDeprecated("listen-address", "use --web.listen-address (the old name goes in the next release)")
	fs.MarkDeprecated("telemetry-path", "use --web.telemetry-path (the old name goes in the next release)")
	fs.DurationVar(&o.offset, "scrape.timeout-offset", 500*time.Millisecond, "kept of Prometheus' scrape timeout (X-Prometheus-Scrape-Timeout-Seconds) for sending the response")
	fs.DurationVar(&o.maxTimeout, "scrape.max-timeout", 30*time.Second, "the longest a scrape reads counters, and the timeout of a scrape that sends none")

	for _, c := range collectorFlags {
		fs.BoolVar(c.on(o), "collector."+c.name, c.def, c.usage)
		// node_exporter's and treydock's spelling of =false (kingpin's).
		fs.Bool("no-collector."+c.name, false, "")
		fs.MarkHidden("no-collector." + c.name)
	}
	fs.StringVar(&o.shard, "shard", "", "export shard I/N of the fabric, split by switch (0 <= I < N), for several exporters of one very large fabric")

	fs.StringVarP(&o.ca, "Ca", "C", "", "CA name to use")
	fs.StringVarP(&o.port, "Port", "P", "", "CA port number to use")
	fs.StringVarP(&o.timeout, "timeout", "t", "", "timeout of one MAD attempt in ms (default 1000)")
	fs.IntVar(&o.retries, "retries", 2, "resends of a MAD that gets no reply")
	fs.StringVarP(&o.mkey, "m_key", "y", "", "M_Key to use in SMPs")
	fs.IntVarP(&o.pkeyIdx, "pkey-idx", "Y", 0, "P_Key index to use for the PerfMgt MADs")
	o.src.AddFlags(fs, query.AllSourceFlags)
	fs.DurationVar(&o.refresh, "refresh", 5*time.Minute, "how often the fabric is discovered again")
	fs.BoolVar(&o.once, "once", false, "print one scrape on stdout and exit")
	fs.StringVar(&o.textfile, "textfile", "", "write one scrape to this file (atomically) and exit, for node_exporter's textfile collector")
	fs.BoolVarP(&o.version, "version", "V", false, "print the version and exit")
	return fs
}

// settle applies the old names and the no- switches and checks what the
// flags cannot check themselves.
func (o *options) settle(fs *pflag.FlagSet) error {
	if fs.Changed("listen-address") {
		if fs.Changed("web.listen-address") {
			o.listen = append(o.listen, o.oldListen)
		} else {
			o.listen = []string{o.oldListen}
		}
	}
	if fs.Changed("telemetry-path") && !fs.Changed("web.telemetry-path") {
		o.path = o.oldPath
	}
	for _, c := range collectorFlags {
		if off, _ := fs.GetBool("no-collector." + c.name); off {
			*c.on(o) = false
		}
	}
	if !strings.HasPrefix(o.path, "/") {
		return fmt.Errorf("invalid --web.telemetry-path %q: it must start with /", o.path)
	}
	if o.refresh <= 0 {
		return fmt.Errorf("invalid --refresh %v: it must be positive", o.refresh)
	}
	if o.offset < 0 || o.maxTimeout <= 0 {
		return fmt.Errorf("invalid --scrape.timeout-offset %v or --scrape.max-timeout %v", o.offset, o.maxTimeout)
	}
	if o.retries < 0 || o.retries > 100 {
		return fmt.Errorf("invalid --retries %d: 0 to 100", o.retries)
	}
	if o.once && o.textfile != "" {
		return fmt.Errorf("--once prints the scrape, --textfile writes it: give one")
	}
	if _, _, err := o.src.Mode(); err != nil {
		return err
	}
	if o.shard != "" {
		if _, err := exporter.ParseShard(o.shard); err != nil {
			return err
		}
	}
	if _, err := o.timeoutMS(); err != nil {
		return err
	}
	if o.mkey != "" {
		if _, err := endport.ParseUint(o.mkey, 64); err != nil {
			return fmt.Errorf("invalid M_Key %q: %v", o.mkey, err)
		}
	}
	return nil
}

// timeoutMS is -t, 1000 (libibmad's default) without it.
func (o *options) timeoutMS() (time.Duration, error) {
	if o.timeout == "" {
		return time.Second, nil
	}
	n, err := endport.ParseUint(o.timeout, 31)
	if err != nil || n == 0 {
		return 0, fmt.Errorf("invalid -t %q: a timeout in ms, a positive integer", o.timeout)
	}
	return time.Duration(n) * time.Millisecond, nil
}
