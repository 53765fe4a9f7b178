package counters

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/ibtool/ibtool/internal/mad"
)

// Counter thresholds: how far a counter may count before a tool calls
// the port bad. The tools that read a threshold file (ibqueryerrors,
// python-rdma's, and the diagnosis) read the same syntax, "<counter>=<value>" lines, blank lines and '#' comments; they
// differ in the counters a file may name, in what a counter without a
// limit means, and in their limits without a file. A Format says which.

// Format is one tool's threshold files and limits.
type Format struct {
	name string
	// counters are the counters the tool judges, in its order.
	counters func() []string
	// lookup is the counter a name in a file stands for ("" for none).
	lookup func(name string) string
	// unknown says why a name is not one of the tool's counters.
	unknown func(name string) string
	// zeroIsOff: a counter without a limit, or with 0, is not judged;
	// otherwise its limit is 0 and any count is beyond it.
	zeroIsOff bool
	// unsetIsOff: a counter without a limit is not judged (0 is still
	// the strictest limit).
	unsetIsOff bool
	// defaults are the limits without a file.
	defaults []Limit
	// fileOverDefaults: a file's limits replace the defaults counter by
	// counter, the others keep theirs; otherwise a file replaces them
	// all.
	fileOverDefaults bool
}

func (f *Format) String() string { return f.name }

// DefaultThresholdFile is ibqueryerrors' threshold file:
// IBDIAG_CONFIG_PATH"/error_thresholds".
const DefaultThresholdFile = "/etc/infiniband-diags/error_thresholds"

// IBQueryErrors is infiniband-diags' ibqueryerrors: a file names the
// counters of ErrorCounters exactly as libibmad does ("PortRcvErrors"); a
// counter the file gives no limit has the limit 0, so any count is beyond
// it. Without a file there are no limits: ibqueryerrors.c starts from
// zeroed thresholds and only its file (IBDIAG_CONFIG_PATH/error_thresholds,
// shipped with every line commented out) sets any. The shipped file's
// commented-out suggestions are 10 for SymbolErrorCounter,
// LinkErrorRecoveryCounter, LinkDownedCounter, PortRcvErrors,
// LocalLinkIntegrityErrors and ExcessiveBufferOverrunErrors, 100 for the
// other error counters and 1000 for PortXmitWait.
var IBQueryErrors = &Format{
	name:     "ibqueryerrors",
	counters: func() []string { return ErrorCounters },
	lookup:   errorCounter,
	unknown:  unknownErrorCounter,
}

// errorCounter is the counter of ErrorCounters named name, as libibmad
// names it; "" for none.
func errorCounter(name string) string {
	for _, c := range ErrorCounters {
		if c == name {
			return c
		}
	}
	return ""
}

func unknownErrorCounter(name string) string {
	return fmt.Sprintf("unknown counter %q (counters: %s)", name, strings.Join(ErrorCounters, ","))
}

// Diagnose is ibtool diagnose's: ibqueryerrors' files (its counters,
// named as libibmad names them, a limit of 0 beyond at the first
// count), but a file's limits replace the defaults only for the
// counters it names, and a counter without a limit is not judged. A
// file written for ibqueryerrors thus means the same, and the counters
// it leaves out keep limits that do not flood.
//
// The defaults are rdma-core's suggestions (the error_thresholds file
// infiniband-diags ships, every line commented out: 10 for the link and
// buffer errors, 100 for the rest), raised to what sites that run
// ibdiagnet filter its limits of 1 up to: 100 for SymbolErrorCounter
// and PortRcvErrors, which a long-lived link gathers a few of from
// every cable touched and every node rebooted. PortXmitWait has none: it
// counts congestion, and a busy port's grows all day (the template's
// 1000 would mark every port that carries traffic). docs/diagnose.md
// has the table.
var Diagnose = &Format{
	name:             "diagnose",
	counters:         func() []string { return ErrorCounters },
	lookup:           errorCounter,
	unknown:          unknownErrorCounter,
	unsetIsOff:       true,
	fileOverDefaults: true,
	defaults: []Limit{
		{"SymbolErrorCounter", 100}, {"LinkErrorRecoveryCounter", 10}, {"LinkDownedCounter", 10},
		{"PortRcvErrors", 100}, {"PortRcvRemotePhysicalErrors", 100}, {"PortRcvSwitchRelayErrors", 100},
		{"PortXmitDiscards", 100}, {"PortXmitConstraintErrors", 100}, {"PortRcvConstraintErrors", 100},
		{"LocalLinkIntegrityErrors", 10}, {"ExcessiveBufferOverrunErrors", 10}, {"VL15Dropped", 100},
	},
}

// PythonRDMA is python-rdma's ibcheck family and ibswportwatch (-T): a
// file names any PortCounters counter by any of its names in any case
// (LookupAny: "SymbolErrors", "symbolErrorCounter", "symbol_error_counter"
// ...); its limits replace the defaults, and a counter without a limit,
// or with 0, is not judged. The defaults are python-rdma's, from
// load_thresholds() in libibtool/errors.py: 10 for PortRcvErrors,
// SymbolErrorCounter, ExcessiveBufferOverrunErrors,
// LinkErrorRecoveryCounter, LocalLinkIntegrityErrors and
// LinkDownedCounter; 100 for PortXmitConstraintErrors, VL15Dropped,
// PortXmitDiscards, PortRcvSwitchRelayErrors, PortRcvRemotePhysicalErrors
// and PortRcvConstraintErrors.
var PythonRDMA = &Format{
	name:     "python-rdma",
	counters: portCounterNames,
	lookup:   LookupAny,
	unknown: func(name string) string {
		return fmt.Sprintf("threshold key %q is not a PortCounters counter", name)
	},
	zeroIsOff: true,
	defaults: []Limit{
		{"SymbolErrorCounter", 10}, {"LinkErrorRecoveryCounter", 10}, {"LinkDownedCounter", 10},
		{"PortRcvErrors", 10}, {"PortRcvRemotePhysicalErrors", 100}, {"PortRcvSwitchRelayErrors", 100},
		{"PortXmitDiscards", 100}, {"PortXmitConstraintErrors", 100}, {"PortRcvConstraintErrors", 100},
		{"LocalLinkIntegrityErrors", 10}, {"ExcessiveBufferOverrunErrors", 10}, {"VL15Dropped", 100},
	},
}

// portCounterNames are PortCounterFields' names.
func portCounterNames() []string {
	var out []string
	for _, f := range PortCounterFields() {
		out = append(out, f.Name)
	}
	return out
}

// Limit is one counter's threshold.
type Limit struct {
	Counter string // mad's field name
	Limit   uint64
}

// Thresholds are the limits a tool judges counters by.
type Thresholds struct {
	Format *Format
	// File is the file the limits were read from, "" for the format's
	// defaults.
	File   string
	given  []Limit // as the file gives them, a counter given twice twice
	limits map[string]uint64
}

// Defaults are f's limits without a file.
func Defaults(f *Format) *Thresholds {
	t := &Thresholds{Format: f, limits: map[string]uint64{}}
	for _, l := range f.defaults {
		t.set(l)
	}
	return t
}

func (t *Thresholds) set(l Limit) {
	t.given = append(t.given, l)
	t.limits[l.Counter] = l.Limit
}

// ThresholdError is a threshold file that cannot be read: a line that
// is not "<counter>=<value>", or the file as a whole.
type ThresholdError struct {
	File string
	Line int    // from 1; 0 when the file as a whole failed (Err)
	Why  string // what is wrong with the line
	// Err is why the file could not be opened (NotOpened) or read.
	Err       error
	NotOpened bool
}

func (e *ThresholdError) Error() string {
	switch {
	case e.Line > 0:
		return fmt.Sprintf("threshold file %s line %d: %s", e.File, e.Line, e.Why)
	case e.NotOpened:
		return "threshold file: " + e.Err.Error()
	}
	return fmt.Sprintf("threshold file %s: %v", e.File, e.Err)
}

func (e *ThresholdError) Unwrap() error { return e.Err }

// ReadThresholds reads the threshold file at path in format f; "" is f's
// defaults. A file that cannot be opened is a *ThresholdError with
// NotOpened (ibqueryerrors takes that as no limits, as the C tool does).
func ReadThresholds(path string, f *Format) (*Thresholds, error) {
	if path == "" {
		return Defaults(f), nil
	}
	file, err := os.Open(path)
	if err != nil {
		return nil, &ThresholdError{File: path, Err: err, NotOpened: true}
	}
	defer file.Close()
	return ParseThresholds(file, path, f)
}

// ParseThresholds reads a threshold file's text (named file in errors):
// "<counter>=<value>" lines, the value a number in C notation (10, 0x10,
// 010 octal, an optional '+'), blank lines and lines starting with '#';
// space around names and values is ignored. The first line that is none
// of these is the error.
func ParseThresholds(r io.Reader, file string, f *Format) (*Thresholds, error) {
	t := &Thresholds{Format: f, File: file, limits: map[string]uint64{}}
	if f.fileOverDefaults {
		for _, l := range f.defaults {
			t.limits[l.Counter] = l.Limit
		}
	}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || text[0] == '#' {
			continue
		}
		bad := func(why string) error { return &ThresholdError{File: file, Line: n, Why: why} }
		name, value, ok := strings.Cut(text, "=")
		name, value = strings.TrimSpace(name), strings.TrimSpace(value)
		if !ok || name == "" {
			return nil, bad(fmt.Sprintf("%q is not <counter>=<value>", text))
		}
		counter := f.lookup(name)
		if counter == "" {
			return nil, bad(f.unknown(name))
		}
		v, ok := parseCNumber(value)
		if !ok {
			return nil, bad(fmt.Sprintf("invalid threshold line %q: %s's threshold %q is not a number", text, name, value))
		}
		t.set(Limit{counter, v})
	}
	if err := sc.Err(); err != nil {
		return nil, &ThresholdError{File: file, Err: err}
	}
	return t, nil
}

// parseCNumber reads all of s as a number in C notation, as strtoul
// with base 0 reads it: an optional '+', then 0x and hex digits, 0 and
// octal digits, or decimal digits. More than 64 bits is no number.
func parseCNumber(s string) (uint64, bool) {
	s = strings.TrimPrefix(s, "+")
	var v uint64
	var err error
	switch {
	case len(s) > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'):
		v, err = strconv.ParseUint(s[2:], 16, 64)
	case len(s) > 1 && s[0] == '0':
		v, err = strconv.ParseUint(s[1:], 8, 64)
	default:
		v, err = strconv.ParseUint(s, 10, 64)
	}
	return v, err == nil
}

// Given are the limits as the file gave them, in its order, a counter
// given twice twice (ibqueryerrors' summary shows them so); the defaults
// in the format's order when no file was read.
func (t *Thresholds) Given() []Limit { return t.given }

// InEffect are the limits that apply, one per counter, in the format's
// counter order.
func (t *Thresholds) InEffect() []Limit {
	var out []Limit
	for _, c := range t.Format.counters() {
		if v, ok := t.limits[c]; ok {
			out = append(out, Limit{c, v})
		}
	}
	return out
}

// Limit is counter's limit, and whether one was set (by the file or the
// defaults).
func (t *Thresholds) Limit(counter string) (uint64, bool) {
	v, ok := t.limits[counter]
	return v, ok
}

// Beyond tells whether v is beyond counter's limit, and the limit.
func (t *Thresholds) Beyond(counter string, v uint64) (limit uint64, beyond bool) {
	limit, set := t.limits[counter]
	if t.Format.zeroIsOff && limit == 0 || t.Format.unsetIsOff && !set {
		return 0, false
	}
	return limit, v > limit
}

// Judged tells whether counter is judged at all: it has a limit, or
// the format takes a missing one as 0.
func (t *Thresholds) Judged(counter string) bool {
	limit, set := t.limits[counter]
	return !(t.Format.zeroIsOff && limit == 0 || t.Format.unsetIsOff && !set)
}

// Exceeded is a counter beyond its limit.
type Exceeded struct {
	Counter   string // mad's field name
	Value     uint64
	Threshold uint64
	Extended  bool // the value is PortCountersExtended's (64 bits)
}

// Exceeded judges a port's counters, those of the format in its order,
// skipping suppressed: PortCountersExtended's where ext is not nil (give
// it only where the PMA has the 64-bit error counters), PortCounters'
// otherwise; a counter neither has is 0.
func (t *Thresholds) Exceeded(basic *mad.PortCounters, ext *mad.PortCountersExtended, suppressed []string) []Exceeded {
	var out []Exceeded
	for _, c := range t.Format.counters() {
		if !t.Judged(c) || contains(suppressed, c) {
			continue
		}
		var v uint64
		switch {
		case ext != nil:
			v, _ = ExtValue(ext, c)
		case basic != nil:
			v, _ = Value(basic, c)
		}
		if limit, beyond := t.Beyond(c, v); beyond {
			out = append(out, Exceeded{Counter: c, Value: v, Threshold: limit, Extended: ext != nil})
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}
