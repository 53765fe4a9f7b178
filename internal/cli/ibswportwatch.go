package cli

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/internal/mad"
)

// ibswportwatch: python-rdma's counter watch. It reads a port's PMA
// counters every interval and prints each counter with its rate since
// the last read (-b, the default), or only the counters that rise faster
// than their threshold (-t, -T). Despite the name, CA ports work too.

type ibswportwatchOptions struct {
	Common
	count      string // -n: reads; "" forever
	interval   string // -p: seconds between reads
	delta      bool   // -b (the default)
	threshold  bool   // -t
	threshFile string
	extended   bool // -x
	all        bool // -a
}

func init() { register(newIbswportwatchCmd) }

func newIbswportwatchCmd(env *Env) *cobra.Command {
	opts := &ibswportwatchOptions{}
	cmd := toolCommand("ibswportwatch [options] [TARGET [PORT]]", "Show a port's counters and their rates over time")
	cmd.Long = `Read a port's PMA counters every -p seconds (default 1; fractions allowed),
-n times (default: until interrupted), and print each counter with its rate
since the previous read ("(+ 12.000/s)" when it moved). With -t only the
counters rising faster than their threshold per second are printed (-T FILE
as ibcheckerrs reads it; counters without one are never printed). TARGET is a
LID, a GUID (-G), a directed route (-D) or a node's name, the local port when
left out; PORT defaults to the port the MADs arrive on (port 1 of a switch).
Reads are paced from the start, so a slow read does not shift the next ones.
With --json, -n is needed; the samples are one document at the end.`
	cmd.Args = argsBetween(0, 2)
	fs := cmd.Flags()
	fs.StringVarP(&opts.count, "count", "n", "", "number of reads (default: until interrupted)")
	fs.StringVarP(&opts.interval, "pause", "p", "1", "seconds between reads")
	fs.BoolVarP(&opts.delta, "delta", "b", false, "show every counter with its rate (the default)")
	fs.BoolVarP(&opts.threshold, "threshold", "t", false, "show only the counters rising faster than their threshold rate")
	fs.StringVarP(&opts.threshFile, "thresholds", "T", "", "load threshold values from this file (name=value lines)")
	fs.BoolVarP(&opts.extended, "extended", "x", false, "watch PortCountersExtended")
	fs.BoolVarP(&opts.all, "all_ports", "a", false, "watch the sum of all ports (PortSelect 255)")
	setupCommon(env, cmd, &opts.Common, "t")
	cmd.RunE = func(_ *cobra.Command, args []string) error { return runIbswportwatch(env, opts, args) }
	return cmd
}

// badWatchArg reports a malformed -p or -n in one line, exit 2.
func badWatchArg(env *Env, format string, args ...any) error {
	fmt.Fprintf(env.IO.Err, "ibswportwatch: "+format+"\n", args...)
	return &ExitError{Code: ExitUsage, Err: errSilent}
}

// watchPlan is what ibswportwatch reads, how often and how it prints.
type watchPlan struct {
	count    int // -1: forever
	interval time.Duration
	th       thresholds // nil: every counter (-b)
}

func (o *ibswportwatchOptions) plan(env *Env) (*watchPlan, error) {
	p := &watchPlan{count: -1}
	secs, err := strconv.ParseFloat(o.interval, 64)
	if err != nil || secs < 0 || math.IsInf(secs, 0) || math.IsNaN(secs) {
		return nil, badWatchArg(env, "invalid interval -p %q: want a number of seconds, such as 1 or 0.5", o.interval)
	}
	p.interval = time.Duration(secs * float64(time.Second))
	if o.count != "" {
		n, err := strconv.ParseUint(o.count, 0, 31)
		if err != nil {
			return nil, badWatchArg(env, "invalid count -n %q: want a number of reads", o.count)
		}
		p.count = int(n)
	}
	if o.JSON && p.count < 0 {
		return nil, badWatchArg(env, "--json prints one document at the end: give the number of reads with -n")
	}
	if o.threshold {
		if p.th, err = loadThresholds(o.threshFile); err != nil {
			return nil, badWatchArg(env, "%v", err)
		}
	}
	return p, nil
}

func runIbswportwatch(env *Env, opts *ibswportwatchOptions, args []string) error {
	c := &opts.Common
	plan, err := opts.plan(env)
	if err != nil {
		return err
	}
	client, err := ibOpenClient(env, c, engineConfig{timeout: DefaultTimeoutMS * time.Millisecond})
	if err != nil {
		return err
	}
	defer client.Engine().Close()
	ctx := context.Background()
	w := &watcher{plan: plan, ext: opts.extended, out: bufio.NewWriter(env.IO.Out), json: c.JSON}
	w.cr = &counterReader{ctx: ctx, client: client, ext: opts.extended}
	if err := w.findTarget(ctx, c, args, opts.all); err != nil {
		return ibFail(env, c, "ibswportwatch", err)
	}
	err = w.run()
	if err == nil && c.JSON {
		err = writeJSON(env.IO.Out, w.doc)
	}
	return err
}

// watcher reads one port again and again.
type watcher struct {
	plan   *watchPlan
	cr     *counterReader
	target counterTarget
	gid    mad.GID
	ext    bool
	out    *bufio.Writer
	json   bool
	doc    watchDoc
}

// findTarget resolves the port watched: the local port, or TARGET's
// port (PORT, else the one the MADs arrive on; a switch's 1).
func (w *watcher) findTarget(ctx context.Context, c *Common, args []string, all bool) error {
	client := w.cr.client
	var guid uint64
	if len(args) == 0 {
		local, err := client.Local()
		if err != nil {
			return err
		}
		var ni mad.NodeInfo
		if err := client.Get(ctx, smpLID(0), 0, nil, &ni); err != nil {
			return fmt.Errorf("reading the local NodeInfo: %w", err)
		}
		w.target = counterTarget{uint64(ni.NodeGUID), ni.NodeType, int(ni.NumPorts), local.LID, local.Num}
		guid = local.PortGUID
	} else {
		d, err := ibResolve(ctx, client, c, args[0])
		if err != nil {
			return err
		}
		cp, err := readCheckPort(ctx, client, d, 0, false)
		if err != nil {
			return err
		}
		port := int(cp.node.LocalPortNum)
		if cp.node.NodeType == mad.NodeTypeSwitch && port == 0 {
			port = 1
		}
		w.target = counterTarget{uint64(cp.node.NodeGUID), cp.node.NodeType, int(cp.node.NumPorts), cp.endLID, port}
		guid = cp.guid
	}
	if len(args) > 1 {
		n, err := strconv.ParseUint(args[1], 0, 8)
		if err != nil {
			return usageErrorf("invalid port %q: a number from 0 to 255", args[1])
		}
		w.target.port = int(n)
	}
	if all {
		w.target.port = allPorts
	}
	binary.BigEndian.PutUint64(w.gid[:], 0xfe80000000000000)
	binary.BigEndian.PutUint64(w.gid[8:], guid)
	w.doc = watchDoc{LID: w.target.lid, GID: w.gid, Port: w.target.port, Samples: []watchSample{}}
	return nil
}

// run reads plan.count times (forever when -1), paced from the start.
func (w *watcher) run() error {
	start := time.Now()
	var last mad.Struct
	var lastAt time.Time
	for n := 0; n != w.plan.count; {
		read := w.cr.read([]counterTarget{w.target})[0]
		now := time.Now()
		if read.err != nil {
			return &ibFailure{cmsg: "reading the counters failed", err: read.err}
		}
		var cur mad.Struct = read.basic
		if w.ext {
			cur = read.ext
		}
		if cur == nil {
			return &ibFailure{cmsg: "the PMA has no PortCountersExtended"}
		}
		var dt float64 // seconds since the last read; 0 on the first
		if last != nil {
			dt = now.Sub(lastAt).Seconds()
		}
		if w.json {
			w.doc.add(cur, last, dt, now.Sub(start))
		} else {
			w.print(cur, last, dt)
			if err := w.out.Flush(); err != nil {
				return err
			}
		}
		last, lastAt = cur, now
		if n++; n != w.plan.count {
			time.Sleep(time.Until(start.Add(time.Duration(n) * w.plan.interval)))
		}
	}
	return nil
}

// watchedFields are the counters printed: every field but the selects
// and reserved bits.
func watchedFields(s mad.Struct) []*mad.FieldDesc {
	var out []*mad.FieldDesc
	d := s.Desc()
	for i := range d.Fields {
		f := &d.Fields[i]
		if !f.Reserved && f.IsNumber() && f.Count == 1 && !strings.HasPrefix(f.Name, "PortSelect") && !strings.HasPrefix(f.Name, "CounterSelect") {
			out = append(out, f)
		}
	}
	return out
}

// print writes one read as python-rdma's printer_delta does: the header,
// then "<name><dots><value>" per counter, "<value> (+ <rate>/s)" padded
// when it moved (dt 0: the first read, values only).
func (w *watcher) print(cur, last mad.Struct, dt float64) {
	fmt.Fprintf(w.out, "# Port counters: Lid %d (%s) port %d\n", w.target.lid, w.gid, w.target.port)
	for _, f := range watchedFields(cur) {
		v, _ := mad.Get(cur, f.Name)
		prev := v
		if last != nil {
			prev, _ = mad.Get(last, f.Name)
		}
		name := f.Name
		if old := pyOldCounterNames[name]; old != "" {
			name = old
		}
		moved := prev != v && dt > 0
		rate := 0.0
		if moved {
			rate = (float64(v) - float64(prev)) / dt
		}
		if w.plan.th != nil {
			limit, ok := w.plan.th[f.Name]
			if !moved || !ok || rate < float64(limit) {
				continue
			}
		}
		text := strconv.FormatUint(v, 10)
		if moved {
			text = fmt.Sprintf("%-8d (+ %.3f/s)", v, rate)
		}
		fmt.Fprintf(w.out, "%s%s%s\n", name, strings.Repeat(".", max(0, 33-len(name))), text)
	}
}

// watchDoc is ibswportwatch's JSON: every read with its rates.
type watchDoc struct {
	LID     uint16        `json:"lid"`
	GID     mad.GID       `json:"gid"`
	Port    int           `json:"port"`
	Samples []watchSample `json:"samples"`
}

type watchSample struct {
	// AtMS is when the read ended, from the first read's start.
	AtMS float64 `json:"at_ms"`
	// Counters are the values read (data counters also in bytes);
	// RatesPerSec the rise of each since the previous read, per second
	// (none on the first read).
	Counters    json.RawMessage    `json:"counters"`
	RatesPerSec map[string]float64 `json:"rates_per_sec,omitempty"`
}

func (d *watchDoc) add(cur, last mad.Struct, dt float64, at time.Duration) {
	s := watchSample{AtMS: float64(at.Microseconds()) / 1000, Counters: perfJSON(cur)}
	if last != nil && dt > 0 {
		s.RatesPerSec = map[string]float64{}
		for _, f := range watchedFields(cur) {
			v, _ := mad.Get(cur, f.Name)
			prev, _ := mad.Get(last, f.Name)
			rate := (float64(v) - float64(prev)) / dt
			s.RatesPerSec[f.JSONName] = rate
			if perfDataFields[f.Name] {
				s.RatesPerSec[f.JSONName+"_bytes"] = 4 * rate
			}
		}
	}
	d.Samples = append(d.Samples, s)
}
