package diagnose

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/internal/atomicfile"
	"github.com/ibtool/ibtool/internal/cli/cmdutil"
	"github.com/ibtool/ibtool/internal/counters"
	"github.com/ibtool/ibtool/internal/diagnose"
	"github.com/ibtool/ibtool/internal/diagnose/report"
	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/nodename"
	"github.com/ibtool/ibtool/internal/query"
)

// ExitFindings is diagnose's exit status when it found errors (with
// --strict, warnings too): 1, as subnet_diff and ibqueryerrors say "not
// clean". An incomplete sweep's 3 wins over it (docs/exit-codes.md).
const ExitFindings = 1

type options struct {
	cmdutil.Common
	src         query.Source
	load        string
	outputDir   string
	expect      string
	expectWidth string
	expectSpeed string
	html        string
	all         bool
	strict      bool
	multicast   bool
	interval    interval
	thresholds  string
}

func NewCmd(env *cmdutil.Env, _ string) *cobra.Command {
	o := &options{}
	cmd := &cobra.Command{
		Use:   "diagnose [options]",
		Short: "Say what is wrong with the fabric, in one sweep",
		Long: `Sweep the fabric once and report what is wrong with it: a walk (by
directed route unless --discovery LID; or --load-cache, or --sa), then the
SMInfo of every subnet manager, the P_Key tables where partitions are
enforced, the counters of both ends of every link (twice, --interval
apart) and the switches' forwarding tables, read all at once. Only Gets:
nothing is changed, no counter is reset. The checks (docs/diagnose.md
lists every finding code with its severity and why):

  walk      what did not answer, with its directed route; MADs lost per link
  ids       zero or duplicate LIDs (LMC ranges), node and port GUIDs, node
            descriptions held twice
  sm        exactly one MASTER, and every port set up by it (SM LID, prefix)
  nodes     devices of one kind at different NodeInfo revisions
  links     ports left in Init or Armed, ends that disagree, MTU or VLs below
            what both ends support, links below what both ends enable or
            support, below --expect-width/--expect-speed
  counters  error counters beyond their thresholds (--threshold-file, in
            ibqueryerrors' format) or at their maximum, and those that rise
            during --interval (symbol errors as a bit error rate)
  pkeys     where switch ports enforce partitions: host P_Keys they lack
  topology  with --expect FILE (a cache or ibnetdiscover's topology file):
            nodes and links gone, new or moved, links slower than before
  routing   the LFTs from every switch to every LID: missing entries, dead
            ends, loops, routes longer than the shortest way; hop counts
            and how routes spread over the ports between switches
  credit_loops  every cycle of the routes' channel dependency graph (per VL
            where the SL2VL tables say so), each with its chain of ports
  multicast with --multicast: each group's MFTs a tree reaching every member

The text shows a summary table, then a few findings per check (--all: every
one); --json the whole report (docs/diagnose.md); --html FILE one page with a
filterable table and a drawing of the switch tiers. --output-dir DIR keeps
everything the sweep read; --load DIR judges it again offline, finding for
finding the same.

Exit status: 0 without error findings (warnings too with --strict), 1 with,
3 when the sweep could not read everything.`,
		Example: `  ibtool diagnose
  ibtool diagnose --expect-width 4X --expect-speed EDR --html fabric.html
  ibnetdiscover > before.topo; ...; ibtool diagnose --expect before.topo
  ibtool diagnose --output-dir diag && ibtool diagnose --load diag --json`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return cmdutil.UsageErrorf("takes no arguments, got %q", args[0])
			}
			return nil
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&o.load, "load", "", "judge a sweep saved with --output-dir DIR instead of sweeping (offline)")
	fs.StringVar(&o.outputDir, "output-dir", "", "keep everything the sweep read in DIR (created), for --load")
	fs.StringVar(&o.expect, "expect", "", "compare with the fabric as it was: a cache (ibnetdiscover --cache) or ibnetdiscover's topology file")
	fs.StringVar(&o.expectWidth, "expect-width", "", "the least width every link should run at: 1X, 2X, 4X, 8X or 12X")
	fs.StringVar(&o.expectSpeed, "expect-speed", "", "the least speed every link should run at: SDR, DDR, QDR, FDR10, FDR, EDR, HDR, NDR or XDR")
	fs.StringVar(&o.html, "html", "", "also write the report as one self-contained HTML page to FILE")
	fs.BoolVar(&o.all, "all", false, "list every finding in the text (default: the first 5 of each check)")
	fs.BoolVar(&o.strict, "strict", false, "exit 1 on warnings too")
	o.interval = interval(diagnose.DefaultInterval)
	fs.Var(&o.interval, "interval", "seconds between the two counter reads (or a duration: 500ms); 0 reads once")
	fs.StringVar(&o.thresholds, "threshold-file", "", "counter thresholds in ibqueryerrors' format (<counter>=<value> lines); the counters it leaves out keep the defaults")
	fs.BoolVar(&o.multicast, "multicast", false, "also read the MFTs and the SA's multicast members, and check every group's tree")
	o.src.AddFlags(fs, query.AllSourceFlags)
	fs.Lookup("discovery").Usage = "LID or DR: how SMPs reach the nodes (default: DR, which needs no forwarding table); SA: as --sa"
	cmdutil.SetupCommon(env, cmd, &o.Common, "DGLKe")
	cmd.RunE = func(c *cobra.Command, args []string) error {
		res, err := run(env, c, o)
		if err := cmdutil.Finish(env, &o.Common, "diagnose", res, err); err != nil || res == nil {
			return err
		}
		return res.exit(env, o.strict)
	}
	return cmd
}

// result is a diagnosis: its report, rendered as text or JSON.
type result struct {
	rep      *diagnose.Report
	perCheck int
	failures int // the sweep's reads that did not answer
}

func (r *result) WriteText(w io.Writer) error {
	return report.WriteText(w, r.rep, report.TextOptions{PerCheck: r.perCheck})
}

func (r *result) MarshalJSON() ([]byte, error) { return json.Marshal(r.rep) }

// exit is the exit status the report asks for.
func (r *result) exit(env *cmdutil.Env, strict bool) error {
	if !r.rep.Complete {
		fmt.Fprintf(env.IO.Err, "diagnose: incomplete: %d %s failed; the walk check lists them\n",
			r.failures, map[bool]string{true: "read", false: "reads"}[r.failures == 1])
		return &cmdutil.ExitError{Code: cmdutil.ExitIncomplete, Err: cmdutil.ErrSilent}
	}
	if r.rep.Errors(strict) > 0 {
		return &cmdutil.ExitError{Code: ExitFindings, Err: cmdutil.ErrSilent}
	}
	return nil
}

func run(env *cmdutil.Env, cmd *cobra.Command, o *options) (*result, error) {
	cfg, err := config(o)
	if err != nil {
		return nil, err
	}
	var s *diagnose.Snapshot
	if o.load != "" {
		if o.src.LoadCache != "" || o.src.SA || o.src.Discovery != "" {
			return nil, cmdutil.UsageErrorf("--load judges a saved sweep: it cannot be combined with --load-cache, --sa or --discovery")
		}
		var saved *diagnose.Config
		if s, saved, err = diagnose.Load(o.load); err != nil {
			return nil, fmt.Errorf("--load %s: %w", o.load, err)
		}
		// What the command line says wins; the rest is as it was judged.
		fl := cmd.Flags()
		if !fl.Changed("expect-width") {
			cfg.ExpectWidth = saved.ExpectWidth
		}
		if !fl.Changed("expect-speed") {
			cfg.ExpectSpeed = saved.ExpectSpeed
		}
		if !fl.Changed("expect") {
			cfg.Expected = saved.Expected
		}
		if !fl.Changed("threshold-file") {
			cfg.Thresholds = saved.Thresholds
		}
	} else if s, err = sweep(env, o); err != nil {
		return nil, err
	}
	cfg.Names = o.src.Names(env.IO.Err)
	res := &result{rep: diagnose.Run(s, cfg, diagnose.Checks()), perCheck: report.DefaultPerCheck, failures: s.Failures()}
	if o.all {
		res.perCheck = 0
	}
	if o.outputDir != "" {
		if err := diagnose.Save(o.outputDir, s, cfg); err != nil {
			return res, fmt.Errorf("--output-dir %s: %w", o.outputDir, err)
		}
	}
	if o.html != "" {
		if err := writeHTML(o.html, res.rep, s.Fabric, cfg.Names); err != nil {
			return res, fmt.Errorf("--html %s: %w", o.html, err)
		}
	}
	return res, nil
}

// config is the checks' configuration from the flags; the expected
// fabric is read before anything is swept, so that a bad file costs
// nothing.
func config(o *options) (*diagnose.Config, error) {
	cfg := &diagnose.Config{}
	var err error
	if o.expectWidth != "" {
		if cfg.ExpectWidth, err = diagnose.ParseWidth(o.expectWidth); err != nil {
			return nil, cmdutil.UsageErrorf("--expect-width: %v", err)
		}
	}
	if o.expectSpeed != "" {
		if cfg.ExpectSpeed, err = diagnose.ParseSpeed(o.expectSpeed); err != nil {
			return nil, cmdutil.UsageErrorf("--expect-speed: %v", err)
		}
	}
	if o.expect != "" {
		if cfg.Expected, err = diagnose.LoadExpected(o.expect); err != nil {
			return nil, fmt.Errorf("--expect: %w", err)
		}
	}
	if o.thresholds != "" {
		if cfg.Thresholds, err = counters.ReadThresholds(o.thresholds, counters.Diagnose); err != nil {
			return nil, fmt.Errorf("--threshold-file: %w", err)
		}
	}
	return cfg, nil
}

// interval is --interval: seconds (5, 0.5) or a duration (500ms, 1m).
type interval time.Duration

// maxInterval bounds --interval: a diagnosis waits for it.
const maxInterval = time.Hour

func (i *interval) String() string { return time.Duration(*i).String() }
func (i *interval) Type() string   { return "seconds" }

func (i *interval) Set(s string) error {
	d, err := time.ParseDuration(s)
	if err != nil {
		secs, ferr := strconv.ParseFloat(s, 64)
		if ferr != nil || math.IsNaN(secs) || math.IsInf(secs, 0) {
			return fmt.Errorf("%q is not a number of seconds or a duration (500ms)", s)
		}
		d = time.Duration(secs * float64(time.Second))
	}
	if d < 0 || d > maxInterval {
		return fmt.Errorf("%q is not between 0 and %v", s, maxInterval)
	}
	*i = interval(d)
	return nil
}

// sweep opens the local port with a loss recorder on its engine and
// sweeps the fabric from the source the flags name.
func sweep(env *cmdutil.Env, o *options) (*diagnose.Snapshot, error) {
	if _, _, err := o.src.Mode(); err != nil {
		return nil, cmdutil.UsageErrorf("%v", err)
	}
	o.src.MlxEPI = o.MlxEPI
	loss := diagnose.NewLossRecorder()
	c, err := cmdutil.OpenClient(env, &o.Common, cmdutil.EngineConfig{
		Timeout: cmdutil.DefaultTimeoutMS * time.Millisecond, RetryCount: 3, Window: o.src.Window(), Trace: loss.Trace})
	if err != nil {
		return nil, err
	}
	defer c.Engine().Close()
	s, err := diagnose.Sweep(context.Background(), c, &o.src, diagnose.SweepOptions{
		Walk: query.Walk{Progress: cmdutil.ProgressLine(env)}, Loss: loss, Interval: time.Duration(o.interval),
		Multicast: o.multicast})
	var ue *query.UsageError
	if errors.As(err, &ue) {
		return nil, cmdutil.UsageErrorf("%v", err)
	}
	if err != nil {
		return nil, fmt.Errorf("sweeping the fabric: %w", err)
	}
	return s, nil
}

// writeHTML writes the page as a whole or not at all.
func writeHTML(path string, rep *diagnose.Report, f *discovery.Fabric, names *nodename.Map) error {
	var b bytes.Buffer
	if err := report.WriteHTML(&b, rep, f, names); err != nil {
		return err
	}
	return atomicfile.WriteFile(path, b.Bytes(), 0o644&^atomicfile.Umask())
}
