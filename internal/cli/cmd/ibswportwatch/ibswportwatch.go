package ibswportwatch

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/internal/cli/cmdutil"
	"github.com/ibtool/ibtool/internal/counters"
	"github.com/ibtool/ibtool/internal/health"
	"github.com/ibtool/ibtool/internal/mad"
)

// ibswportwatch: python-rdma's counter watch. It reads a port's PMA
// counters every interval and prints each counter with its rate since
// the last read (-b, the default), or only the counters that rise faster
// than their threshold (-t, -T). Despite the name, CA ports work too.

type ibswportwatchOptions struct {
	cmdutil.Common
	count      string // -n: reads; "" forever
	interval   string // -p: seconds between reads
	delta      bool   // -b (the default)
	threshold  bool   // -t
	threshFile string
	group      string // the counter group (-x, -X, ...): "" for PortCounters
	all        bool   // -a
}

// watchGroups are python-rdma's counter-group flags and the attribute
// each watches.
var watchGroups = []struct{ short, long, attr, usage string }{
	{"x", "extended", "PortCountersExtended", "watch PortCountersExtended"},
	{"X", "xmtsl", "PortXmitDataSL", "watch the transmit data per SL"},
	{"S", "rcvsl", "PortRcvDataSL", "watch the receive data per SL"},
	{"D", "xmtdisc", "PortXmitDiscardDetails", "watch the transmit discard details"},
	{"E", "rcverr", "PortRcvErrorDetails", "watch the receive error details"},
	{"F", "flow", "PortFlowCtlCounters", "watch the flow control counters"},
	{"", "vl-xmit-errs", "PortVLXmitFlowCtlUpdateErrors", "watch the flow control update errors per VL"},
	{"", "vl-xmit-wait", "PortVLXmitWaitCounters", "watch the transmit wait per VL"},
	{"", "vl-congestion", "SwPortVLCongestion", "watch the switch port congestion per VL"},
}

// groupFlag sets the watched group; the last flag given wins, as
// python-rdma's store_const options do.
type groupFlag struct {
	dst  *string
	attr string
}

func (f *groupFlag) String() string   { return "false" }
func (f *groupFlag) Type() string     { return "bool" }
func (f *groupFlag) IsBoolFlag() bool { return true }
func (f *groupFlag) Set(s string) error {
	on, err := strconv.ParseBool(s)
	if err == nil && on {
		*f.dst = f.attr
	}
	return err
}

// NewCmd builds the ibswportwatch command.
func NewCmd(env *cmdutil.Env, _ string) *cobra.Command {
	opts := &ibswportwatchOptions{}
	cmd := cmdutil.ToolCommand("ibswportwatch [options] [TARGET [PORT]]", "Show a port's counters and their rates over time")
	cmd.Long = `Read a port's PMA counters every -p seconds (default 1; fractions allowed),
-n times (default: until interrupted), and print each counter with its rate
since the previous read ("(+ 12.000/s)" when it moved). With -t only the
counters rising faster than their threshold per second are printed (-T FILE
as ibcheckerrs reads it; counters without one are never printed). TARGET is a
LID, a GUID (-G), a directed route (-D) or a node's name, the local port when
left out; PORT defaults to the port the MADs arrive on (port 1 of a switch).
Reads are paced from the start, so a slow read does not shift the next ones.
With --json, -n is needed; the samples are one document at the end.`
	cmd.Args = cmdutil.ArgsBetween(0, 2)
	fs := cmd.Flags()
	fs.StringVarP(&opts.count, "count", "n", "", "number of reads (default: until interrupted)")
	fs.StringVarP(&opts.interval, "pause", "p", "1", "seconds between reads")
	fs.BoolVarP(&opts.delta, "delta", "b", false, "show every counter with its rate (the default)")
	fs.BoolVarP(&opts.threshold, "threshold", "t", false, "show only the counters rising faster than their threshold rate")
	fs.StringVarP(&opts.threshFile, "thresholds", "T", "", "load threshold values from this file (name=value lines)")
	for _, g := range watchGroups {
		f := fs.VarPF(&groupFlag{&opts.group, g.attr}, g.long, g.short, g.usage)
		f.NoOptDefVal = "true"
	}
	fs.BoolVarP(&opts.all, "all_ports", "a", false, "watch the sum of all ports (PortSelect 255)")
	// -D is --xmtdisc here: a directed route is --Direct, as in python-rdma.
	cmdutil.SetupCommon(env, cmd, &opts.Common, "tD")
	fs.BoolVar(&opts.Direct, "Direct", false, "use Direct address argument")
	cmd.RunE = func(_ *cobra.Command, args []string) error { return runIbswportwatch(env, opts, args) }
	return cmd
}

// badWatchArg reports a malformed -p or -n in one line, exit 2.
func badWatchArg(env *cmdutil.Env, format string, args ...any) error {
	fmt.Fprintf(env.IO.Err, "ibswportwatch: "+format+"\n", args...)
	return &cmdutil.ExitError{Code: cmdutil.ExitUsage, Err: cmdutil.ErrSilent}
}

// watchPlan is what ibswportwatch reads, how often and how it prints.
type watchPlan struct {
	count    int // -1: forever
	interval time.Duration
	th       *counters.Thresholds // nil: every counter (-b)
}

func (o *ibswportwatchOptions) plan(env *cmdutil.Env) (*watchPlan, error) {
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
		if p.th, err = counters.ReadThresholds(o.threshFile, counters.PythonRDMA); err != nil {
			return nil, badWatchArg(env, "%v", err)
		}
	}
	return p, nil
}

func runIbswportwatch(env *cmdutil.Env, opts *ibswportwatchOptions, args []string) error {
	c := &opts.Common
	plan, err := opts.plan(env)
	if err != nil {
		return err
	}
	client, err := cmdutil.IBOpenClient(env, c, cmdutil.EngineConfig{Timeout: cmdutil.DefaultTimeoutMS * time.Millisecond})
	if err != nil {
		return err
	}
	defer client.Engine().Close()
	ctx := context.Background()
	w := &watcher{ctx: ctx, plan: plan, out: bufio.NewWriter(env.IO.Out), json: c.JSON}
	w.cr = &counters.Reader{Client: client, Extended: opts.group == "PortCountersExtended"}
	if opts.group != "" && !w.cr.Extended {
		w.cr.Group = mad.LookupStruct(opts.group)
	}
	if err := w.findTarget(ctx, c, args, opts.all); err != nil {
		return cmdutil.Fail(env, c, "ibswportwatch", err)
	}
	err = w.run()
	if err == nil && c.JSON {
		err = cmdutil.WriteJSON(env.IO.Out, w.doc)
	}
	return err
}

// watcher reads one port again and again.
type watcher struct {
	ctx    context.Context
	plan   *watchPlan
	cr     *counters.Reader
	target counters.Target
	gid    mad.GID
	out    *bufio.Writer
	json   bool
	doc    WatchDoc
}

// findTarget resolves the port watched: the local port, or TARGET's
// port (PORT, else the one the MADs arrive on; a switch's 1).
func (w *watcher) findTarget(ctx context.Context, c *cmdutil.Common, args []string, all bool) error {
	client := w.cr.Client
	var guid uint64
	if len(args) == 0 {
		local, err := client.Local()
		if err != nil {
			return err
		}
		var ni mad.NodeInfo
		if err := client.Get(ctx, cmdutil.SMPLID(0), 0, nil, &ni); err != nil {
			return fmt.Errorf("reading the local NodeInfo: %w", err)
		}
		w.target = counters.Target{NodeGUID: uint64(ni.NodeGUID), NodeType: ni.NodeType, NumPorts: int(ni.NumPorts), LID: local.LID, Port: local.Num}
		guid = local.PortGUID
	} else {
		d, err := cmdutil.IBResolve(ctx, client, c, args[0])
		if err != nil {
			return err
		}
		hp, err := health.ReadPort(ctx, client, d, 0, false)
		if err != nil {
			return err
		}
		port := int(hp.Node.LocalPortNum)
		if hp.Node.NodeType == mad.NodeTypeSwitch && port == 0 {
			port = 1
		}
		w.target = counters.Target{NodeGUID: uint64(hp.Node.NodeGUID), NodeType: hp.Node.NodeType, NumPorts: int(hp.Node.NumPorts), LID: hp.EndLID, Port: port}
		guid = hp.GUID
	}
	if len(args) > 1 {
		n, err := strconv.ParseUint(args[1], 0, 8)
		if err != nil {
			return cmdutil.UsageErrorf("invalid port %q: a number from 0 to 255", args[1])
		}
		w.target.Port = int(n)
	}
	if all {
		w.target.Port = counters.AllPortSelect
	}
	binary.BigEndian.PutUint64(w.gid[:], 0xfe80000000000000)
	binary.BigEndian.PutUint64(w.gid[8:], guid)
	w.doc = WatchDoc{LID: w.target.LID, GID: w.gid, Port: w.target.Port, Samples: []watchSample{}}
	return nil
}

// run reads plan.count times (forever when -1), paced from the start.
func (w *watcher) run() error {
	start := time.Now()
	var last mad.Struct
	var lastAt time.Time
	for n := 0; n != w.plan.count; {
		read := w.cr.Read(w.ctx, []counters.Target{w.target})[0]
		now := time.Now()
		if read.Err != nil {
			return &cmdutil.Failure{CMsg: "reading the counters failed", Err: read.Err}
		}
		var cur mad.Struct = read.Basic
		switch {
		case w.cr.Extended:
			cur = read.Extended
		case w.cr.Group != nil:
			cur = read.Group
		}
		if isNilStruct(cur) {
			return &cmdutil.Failure{CMsg: "the PMA gave no " + w.attr()}
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

// attr is the name of the attribute watched.
func (w *watcher) attr() string {
	switch {
	case w.cr.Extended:
		return "PortCountersExtended"
	case w.cr.Group != nil:
		return w.cr.Group.Name
	}
	return "PortCounters"
}

// watchedCounter is one counter printed: a field, or an element of an
// array field ("PortXmitDataSL[3]").
type watchedCounter struct {
	field *mad.FieldDesc
	path  string // for mad.Get
	name  string // as printed
	json  string // its JSON name
}

// watchedCounters are the counters printed: every field but the selects
// and reserved bits, arrays element by element.
func watchedCounters(s mad.Struct) []watchedCounter {
	var out []watchedCounter
	d := s.Desc()
	for i := range d.Fields {
		f := &d.Fields[i]
		if f.Reserved || !f.IsNumber() || strings.HasPrefix(f.Name, "PortSelect") || strings.HasPrefix(f.Name, "CounterSelect") {
			continue
		}
		name := f.Name
		if old := counters.OldLabel(name); old != "" {
			name = old
		}
		if f.Count == 1 {
			out = append(out, watchedCounter{f, f.Name, name, f.JSONName})
			continue
		}
		for e := 0; e < f.Count; e++ {
			idx := "[" + strconv.Itoa(e) + "]"
			out = append(out, watchedCounter{f, f.Name + idx, name + idx, f.JSONName + "_" + strconv.Itoa(e)})
		}
	}
	return out
}

// print writes one read as python-rdma's printer_delta does: the header,
// then "<name><dots><value>" per counter, "<value> (+ <rate>/s)" padded
// when it moved (dt 0: the first read, values only).
func (w *watcher) print(cur, last mad.Struct, dt float64) {
	fmt.Fprintf(w.out, "# Port counters: Lid %d (%s) port %d\n", w.target.LID, w.gid, w.target.Port)
	for _, wc := range watchedCounters(cur) {
		v, _ := mad.Get(cur, wc.path)
		prev := v
		if last != nil {
			prev, _ = mad.Get(last, wc.path)
		}
		name := wc.name
		moved := prev != v && dt > 0
		rate := 0.0
		if moved {
			rate = (float64(v) - float64(prev)) / dt
		}
		if w.plan.th != nil {
			limit, ok := w.plan.th.Limit(wc.field.Name)
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

// isNilStruct reports whether s is nil or a nil pointer.
func isNilStruct(s mad.Struct) bool {
	if s == nil {
		return true
	}
	v := reflect.ValueOf(s)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

// WatchDoc is ibswportwatch's JSON: every read with its rates.
type WatchDoc struct {
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

func (d *WatchDoc) add(cur, last mad.Struct, dt float64, at time.Duration) {
	s := watchSample{AtMS: float64(at.Microseconds()) / 1000, Counters: counters.JSON(cur)}
	if last != nil && dt > 0 {
		s.RatesPerSec = map[string]float64{}
		for _, wc := range watchedCounters(cur) {
			v, _ := mad.Get(cur, wc.path)
			prev, _ := mad.Get(last, wc.path)
			rate := (float64(v) - float64(prev)) / dt
			s.RatesPerSec[wc.json] = rate
			if counters.IsDataField(wc.field.Name) {
				s.RatesPerSec[wc.json+"_bytes"] = counters.OctetsPerUnit * rate
			}
		}
	}
	d.Samples = append(d.Samples, s)
}
