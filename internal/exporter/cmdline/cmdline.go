// Package cmdline is ibtool-exporter's command line: its flags, in one
// place for the daemon, which parses them, and for ibtool's exporter
// command, whose help, man page and completion list them without linking
// the exporter.
package cmdline

import (
	"time"

	"github.com/spf13/pflag"

	"github.com/ibtool/ibtool/internal/query"
)

// Collectors are the metric groups an exporter writes.
type Collectors struct {
	// Counters are the ports' PortCounters and PortCountersExtended
	// (and the scrape's own metrics about reading them).
	Counters bool
	// Links are each port's state, width, rate and far end, and the
	// nodes (from the discovery: they cost no MAD per scrape).
	Links bool
	// ErrorDetails are PortRcvErrorDetails, one more MAD per port.
	ErrorDetails bool
}

// DefaultAddress is where the exporter listens by default: 9315, the
// port Prometheus' list of default ports gives InfiniBand metrics (and
// treydock/infiniband_exporter uses), so firewalls and scrape configs
// already open for it need no change.
const DefaultAddress = ":9315"

// Options are the command line.
type Options struct {
	// The web side, as every exporter on prometheus/exporter-toolkit
	// names it.
	Listen     []string
	Path       string
	WebConfig  string
	Systemd    bool
	OldListen  string // --listen-address: old names, hidden, for one release
	OldPath    string // --telemetry-path
	Offset     time.Duration
	MaxTimeout time.Duration

	Collect        Collectors
	GoMetrics      bool
	ProcessMetrics bool
	Shard          string

	// The fabric: where it comes from, through which port, how often.
	Src      query.Source
	CA, Port string
	Timeout  string // -t, in ms as the C tools take it
	Retries  int
	MKey     string
	PKeyIdx  int
	Refresh  time.Duration
	Once     bool
	Textfile string
	Version  bool
}

// CollectorFlag is one --collector.NAME switch.
type CollectorFlag struct {
	Name, Usage string
	On          func(o *Options) *bool
	Default     bool
}

// CollectorFlags are the --collector.NAME switches.
var CollectorFlags = []CollectorFlag{
	{"counters", "every linked port's PortCounters and PortCountersExtended, read at each scrape", func(o *Options) *bool { return &o.Collect.Counters }, true},
	{"links", "each port's state, width, rate and far end, and the nodes (from the discovery: no MAD per scrape)", func(o *Options) *bool { return &o.Collect.Links }, true},
	{"error-details", "PortRcvErrorDetails of every linked port (one more MAD per port and scrape)", func(o *Options) *bool { return &o.Collect.ErrorDetails }, false},
	{"go", "the Go runtime's go_* metrics", func(o *Options) *bool { return &o.GoMetrics }, true},
	{"process", "the process' process_* metrics (CPU, memory, open files)", func(o *Options) *bool { return &o.ProcessMetrics }, true},
}

// New is the exporter's flag set, filling o.
func New(o *Options) *pflag.FlagSet {
	fs := pflag.NewFlagSet("ibtool-exporter", pflag.ContinueOnError)
	fs.SortFlags = false
	fs.StringArrayVar(&o.Listen, "web.listen-address", []string{DefaultAddress}, "address to listen on for scrapes; repeat it for several (vsock://:PORT for a vsock)")
	fs.StringVar(&o.Path, "web.telemetry-path", "/metrics", "URL path of the metrics")
	fs.StringVar(&o.WebConfig, "web.config.file", "", "exporter-toolkit web config: TLS, client certificates, basic auth (see docs/exporter.md)")
	fs.BoolVar(&o.Systemd, "web.systemd-socket", false, "listen on the sockets systemd passes (socket activation) instead of --web.listen-address")
	fs.StringVar(&o.OldListen, "listen-address", "", "old name of --web.listen-address")
	fs.StringVar(&o.OldPath, "telemetry-path", "", "old name of --web.telemetry-path")
	fs.MarkDeprecated("listen-address", "use --web.listen-address (the old name goes in the next release)")
	fs.MarkDeprecated("telemetry-path", "use --web.telemetry-path (the old name goes in the next release)")
	fs.DurationVar(&o.Offset, "scrape.timeout-offset", 500*time.Millisecond, "kept of Prometheus' scrape timeout (X-Prometheus-Scrape-Timeout-Seconds) for sending the response")
	fs.DurationVar(&o.MaxTimeout, "scrape.max-timeout", 30*time.Second, "the longest a scrape reads counters, and the timeout of a scrape that sends none")

	for _, c := range CollectorFlags {
		fs.BoolVar(c.On(o), "collector."+c.Name, c.Default, c.Usage)
		// node_exporter's and treydock's spelling of =false (kingpin's).
		fs.Bool("no-collector."+c.Name, false, "")
		fs.MarkHidden("no-collector." + c.Name)
	}
	fs.StringVar(&o.Shard, "shard", "", "export shard I/N of the fabric, split by switch (0 <= I < N), for several exporters of one very large fabric")

	fs.StringVarP(&o.CA, "Ca", "C", "", "CA name to use")
	fs.StringVarP(&o.Port, "Port", "P", "", "CA port number to use")
	fs.StringVarP(&o.Timeout, "timeout", "t", "", "timeout of one MAD attempt in ms (default 1000)")
	fs.IntVar(&o.Retries, "retries", 2, "resends of a MAD that gets no reply")
	fs.StringVarP(&o.MKey, "m_key", "y", "", "M_Key to use in SMPs")
	fs.IntVarP(&o.PKeyIdx, "pkey-idx", "Y", 0, "P_Key index to use for the PerfMgt MADs")
	o.Src.AddFlags(fs, query.AllSourceFlags)
	fs.DurationVar(&o.Refresh, "refresh", 5*time.Minute, "how often the fabric is discovered again")
	fs.BoolVar(&o.Once, "once", false, "print one scrape on stdout and exit")
	fs.StringVar(&o.Textfile, "textfile", "", "write one scrape to this file (atomically) and exit, for node_exporter's textfile collector")
	fs.BoolVarP(&o.Version, "version", "V", false, "print the version and exit")
	return fs
}
