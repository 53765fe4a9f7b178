package counters

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ibtool/ibtool/internal/mad"
)

func parse(t *testing.T, text string, f *Format) *Thresholds {
	t.Helper()
	th, err := ParseThresholds(strings.NewReader(text), "th", f)
	if err != nil {
		t.Fatalf("%s: %v", f, err)
	}
	return th
}

// One syntax for both formats: comments, blank lines, space around names
// and values, numbers in C notation; a counter given twice is kept twice
// for ibqueryerrors' summary and its last value counts.
func TestThresholdsSyntax(t *testing.T) {
	text := "# limits\n\n  SymbolErrorCounter = 10\nPortRcvErrors=0x1F\r\n\t# indented comment\nVL15Dropped=010\nPortXmitWait=+7\nSymbolErrorCounter=12\n"
	for _, f := range []*Format{IBQueryErrors, PythonRDMA} {
		th := parse(t, text, f)
		want := []Limit{{"SymbolErrorCounter", 10}, {"PortRcvErrors", 31}, {"VL15Dropped", 8}, {"PortXmitWait", 7}, {"SymbolErrorCounter", 12}}
		if !reflect.DeepEqual(th.Given(), want) {
			t.Errorf("%s: given %v, want %v", f, th.Given(), want)
		}
		if v, ok := th.Limit("SymbolErrorCounter"); !ok || v != 12 {
			t.Errorf("%s: SymbolErrorCounter %d %v, want the last value, 12", f, v, ok)
		}
		if th.File != "th" {
			t.Errorf("%s: file %q", f, th.File)
		}
	}
}

// python-rdma's files name a counter any way; ibqueryerrors' only as
// libibmad does, and only its error counters.
func TestThresholdsNames(t *testing.T) {
	th := parse(t, "SymbolErrors=100\nlinkdownedcounter = 0\nport_rcv_errors=5\nXmtData=9\nportXmitWait=3\n", PythonRDMA)
	want := []Limit{{"SymbolErrorCounter", 100}, {"LinkDownedCounter", 0}, {"PortRcvErrors", 5}, {"PortXmitData", 9}, {"PortXmitWait", 3}}
	if !reflect.DeepEqual(th.Given(), want) {
		t.Errorf("given %v, want %v", th.Given(), want)
	}
	// In the format's order (PortCounters' wire order), defaults replaced.
	wantEffect := []Limit{{"SymbolErrorCounter", 100}, {"LinkDownedCounter", 0}, {"PortRcvErrors", 5}, {"PortXmitData", 9}, {"PortXmitWait", 3}}
	if !reflect.DeepEqual(th.InEffect(), wantEffect) {
		t.Errorf("in effect %v, want %v", th.InEffect(), wantEffect)
	}
	if _, ok := th.Limit("VL15Dropped"); ok {
		t.Error("a file's limits replace python-rdma's defaults: VL15Dropped has none")
	}
	for _, name := range []string{"SymbolErrors", "symbolerrorcounter", "PortXmitData"} {
		_, err := ParseThresholds(strings.NewReader(name+"=1\n"), "th", IBQueryErrors)
		if err == nil || !strings.Contains(err.Error(), `unknown counter "`+name+`"`) {
			t.Errorf("ibqueryerrors %s: %v, want unknown counter", name, err)
		}
	}
}

// A line that is not "<counter>=<value>" is one line of error naming the
// file and the line; nothing is half read.
func TestThresholdsErrors(t *testing.T) {
	for _, tc := range []struct {
		f          *Format
		text, want string
	}{
		{IBQueryErrors, "# x\nSymbolErrorCounter 10\n", `threshold file th line 2: "SymbolErrorCounter 10" is not <counter>=<value>`},
		{PythonRDMA, "=5\n", `threshold file th line 1: "=5" is not <counter>=<value>`},
		{IBQueryErrors, "SymbolErrors=10\n", `threshold file th line 1: unknown counter "SymbolErrors" (counters: SymbolErrorCounter,`},
		{PythonRDMA, "SymbolErrorCounter=10\nNoSuchCounter=5\n", `threshold file th line 2: threshold key "NoSuchCounter" is not a PortCounters counter`},
		{IBQueryErrors, "PortRcvErrors=ten\n", `threshold file th line 1: invalid threshold line "PortRcvErrors=ten": PortRcvErrors's threshold "ten" is not a number`},
		{PythonRDMA, "\n\nSymbolErrorCounter=ten\n", `threshold file th line 3: invalid threshold line "SymbolErrorCounter=ten"`},
		{PythonRDMA, "PortRcvErrors=09\n", `line 1: invalid threshold line "PortRcvErrors=09"`},
		{PythonRDMA, "PortRcvErrors=-1\n", `line 1: invalid threshold line "PortRcvErrors=-1"`},
		{IBQueryErrors, "PortRcvErrors=0x\n", `line 1: invalid threshold line "PortRcvErrors=0x"`},
		{IBQueryErrors, "PortRcvErrors=\n", `line 1: invalid threshold line "PortRcvErrors="`},
		{IBQueryErrors, "PortRcvErrors=18446744073709551616\n", `is not a number`},
		{PythonRDMA, "PortRcvErrors=1_000\n", `is not a number`},
	} {
		th, err := ParseThresholds(strings.NewReader(tc.text), "th", tc.f)
		var te *ThresholdError
		if th != nil || !errors.As(err, &te) || te.Line == 0 || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s %q: %v, %v; want one line with %q", tc.f, tc.text, th, err, tc.want)
		}
	}
	if v, ok := parseCNumber("18446744073709551615"); !ok || v != ^uint64(0) {
		t.Errorf("the largest value: %d %v", v, ok)
	}
}

func TestReadThresholds(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "thresholds")
	if err := os.WriteFile(path, []byte("PortRcvErrors=3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	th, err := ReadThresholds(path, IBQueryErrors)
	if err != nil || th.File != path || len(th.Given()) != 1 {
		t.Fatalf("%+v %v", th, err)
	}
	missing := filepath.Join(dir, "none")
	_, err = ReadThresholds(missing, PythonRDMA)
	var te *ThresholdError
	if !errors.As(err, &te) || !te.NotOpened || !errors.Is(err, os.ErrNotExist) || !strings.HasPrefix(err.Error(), "threshold file: open "+missing) {
		t.Errorf("missing file: %v", err)
	}
	_, err = ReadThresholds(dir, IBQueryErrors) // opens, cannot be read
	if !errors.As(err, &te) || te.NotOpened || te.Line != 0 || !strings.HasPrefix(err.Error(), "threshold file "+dir+": ") {
		t.Errorf("a directory: %v", err)
	}
	if th, err := ReadThresholds("", PythonRDMA); err != nil || th.File != "" || len(th.InEffect()) != 12 {
		t.Errorf(`"" is the defaults: %+v %v`, th, err)
	}
}

// Each tool's limits without a file, and what a counter without a limit
// means to it.
func TestThresholdDefaults(t *testing.T) {
	q := Defaults(IBQueryErrors)
	if len(q.Given()) != 0 || q.File != "" {
		t.Errorf("ibqueryerrors has no limits without its file: %v", q.Given())
	}
	if limit, beyond := q.Beyond("PortRcvErrors", 1); !beyond || limit != 0 {
		t.Errorf("ibqueryerrors without limits: 1 PortRcvErrors is beyond 0: %d %v", limit, beyond)
	}
	if _, beyond := q.Beyond("PortRcvErrors", 0); beyond {
		t.Error("0 is never beyond")
	}

	p := Defaults(PythonRDMA)
	want := map[string]uint64{
		"SymbolErrorCounter": 10, "LinkErrorRecoveryCounter": 10, "LinkDownedCounter": 10, "PortRcvErrors": 10,
		"PortRcvRemotePhysicalErrors": 100, "PortRcvSwitchRelayErrors": 100, "PortXmitDiscards": 100,
		"PortXmitConstraintErrors": 100, "PortRcvConstraintErrors": 100, "LocalLinkIntegrityErrors": 10,
		"ExcessiveBufferOverrunErrors": 10, "VL15Dropped": 100,
	}
	got := map[string]uint64{}
	for _, l := range p.InEffect() {
		got[l.Counter] = l.Limit
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("python-rdma's defaults %v, want %v", got, want)
	}
	if _, beyond := p.Beyond("PortXmitData", 1<<30); beyond {
		t.Error("python-rdma judges no counter without a limit")
	}
	if limit, beyond := p.Beyond("PortRcvErrors", 11); !beyond || limit != 10 {
		t.Errorf("11 PortRcvErrors: %d %v", limit, beyond)
	}
	// 0 turns a counter off for python-rdma, and is the strictest limit
	// for ibqueryerrors.
	if _, beyond := parse(t, "PortRcvErrors=0\n", PythonRDMA).Beyond("PortRcvErrors", 5); beyond {
		t.Error("python-rdma: a limit of 0 is no limit")
	}
	if _, beyond := parse(t, "PortRcvErrors=0\n", IBQueryErrors).Beyond("PortRcvErrors", 5); !beyond {
		t.Error("ibqueryerrors: a limit of 0 is beyond at 1")
	}
}

func TestExceeded(t *testing.T) {
	basic := &mad.PortCounters{SymbolErrorCounter: 5, PortRcvErrors: 20, VL15Dropped: 3, PortXmitData: 1 << 30, PortXmitWait: 50}
	ext := &mad.PortCountersExtended{SymbolErrorCounter: 1 << 40, PortXmitWait: 2}

	q := parse(t, "SymbolErrorCounter=5\nPortXmitWait=10\n", IBQueryErrors)
	got := q.Exceeded(basic, nil, []string{"VL15Dropped"})
	want := []Exceeded{{"PortRcvErrors", 20, 0, false}, {"PortXmitWait", 50, 10, false}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("PortCounters: %v, want %v", got, want)
	}
	// The 64-bit counters where given, whatever PortCounters says.
	got = q.Exceeded(basic, ext, nil)
	want = []Exceeded{{"SymbolErrorCounter", 1 << 40, 5, true}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("PortCountersExtended: %v, want %v", got, want)
	}

	// python-rdma: every counter with a limit, data counters too, in
	// wire order.
	p := parse(t, "XmtData=1000\nsymbolerrors=4\nVL15Dropped=0\n", PythonRDMA)
	got = p.Exceeded(basic, nil, nil)
	want = []Exceeded{{"SymbolErrorCounter", 5, 4, false}, {"PortXmitData", 1 << 30, 1000, false}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("python-rdma: %v, want %v", got, want)
	}
}

// Value and ExtValue know every PortCounters counter, as mad.Get does.
func TestCounterValues(t *testing.T) {
	pc := &mad.PortCounters{}
	pce := &mad.PortCountersExtended{}
	for i, f := range PortCounterFields() {
		limit := ^uint64(0) >> (64 - f.Width)
		if err := mad.Set(pc, f.Name, uint64(i+1)&limit); err != nil {
			t.Fatal(err)
		}
		if pce.Desc().Field(f.Name) != nil {
			if err := mad.Set(pce, f.Name, uint64(i+100)); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, f := range PortCounterFields() {
		want, _ := mad.Get(pc, f.Name)
		if v, ok := Value(pc, f.Name); !ok || v != want {
			t.Errorf("Value %s: %d %v, want %d", f.Name, v, ok, want)
		}
		if pce.Desc().Field(f.Name) == nil {
			continue
		}
		want, _ = mad.Get(pce, f.Name)
		if v, ok := ExtValue(pce, f.Name); !ok || v != want {
			t.Errorf("ExtValue %s: %d %v, want %d", f.Name, v, ok, want)
		}
	}
	if _, ok := Value(pc, "PortSelect"); ok {
		t.Error("PortSelect is no counter")
	}
	if LookupAny("XMTWAIT") != "PortXmitWait" || LookupAny("port_rcv_data") != "PortRcvData" || LookupAny("nonsense") != "" {
		t.Error("LookupAny")
	}
	if PyName("PortXmitData") != "portXmitData" || PyName("VL15Dropped") != "VL15Dropped" || PyName("LID") != "LID" {
		t.Error("PyName")
	}
}

// The diagnosis reads ibqueryerrors' files, but a file's limits replace
// its defaults one counter at a time, and a counter without a limit
// (PortXmitWait) is not judged.
func TestDiagnoseThresholds(t *testing.T) {
	d := Defaults(Diagnose)
	want := map[string]uint64{
		"SymbolErrorCounter": 100, "LinkErrorRecoveryCounter": 10, "LinkDownedCounter": 10, "PortRcvErrors": 100,
		"PortRcvRemotePhysicalErrors": 100, "PortRcvSwitchRelayErrors": 100, "PortXmitDiscards": 100,
		"PortXmitConstraintErrors": 100, "PortRcvConstraintErrors": 100, "LocalLinkIntegrityErrors": 10,
		"ExcessiveBufferOverrunErrors": 10, "VL15Dropped": 100,
	}
	got := map[string]uint64{}
	for _, l := range d.InEffect() {
		got[l.Counter] = l.Limit
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("defaults %v, want %v", got, want)
	}
	if _, beyond := d.Beyond("PortXmitWait", 1<<31); beyond || d.Judged("PortXmitWait") {
		t.Error("PortXmitWait has no default limit: not judged")
	}
	if limit, beyond := d.Beyond("PortRcvErrors", 101); !beyond || limit != 100 {
		t.Errorf("101 PortRcvErrors: %d %v", limit, beyond)
	}

	f := parse(t, "PortRcvErrors=0\nPortXmitWait=1000\n", Diagnose)
	if limit, beyond := f.Beyond("PortRcvErrors", 1); !beyond || limit != 0 {
		t.Errorf("a limit of 0 is beyond at 1, as for ibqueryerrors: %d %v", limit, beyond)
	}
	if limit, beyond := f.Beyond("SymbolErrorCounter", 100); beyond || limit != 100 || !f.Judged("SymbolErrorCounter") {
		t.Errorf("a counter the file leaves out keeps its default: %d %v", limit, beyond)
	}
	if _, beyond := f.Beyond("PortXmitWait", 1001); !beyond {
		t.Error("a file can give PortXmitWait a limit")
	}
	if !reflect.DeepEqual(f.Given(), []Limit{{"PortRcvErrors", 0}, {"PortXmitWait", 1000}}) {
		t.Errorf("given %v: the file's lines", f.Given())
	}
	ex := f.Exceeded(&mad.PortCounters{PortRcvErrors: 1, SymbolErrorCounter: 100, PortXmitWait: 2000}, nil, nil)
	if !reflect.DeepEqual(ex, []Exceeded{{"PortRcvErrors", 1, 0, false}, {"PortXmitWait", 2000, 1000, false}}) {
		t.Errorf("exceeded %v", ex)
	}
	// ibqueryerrors' names only.
	if _, err := ParseThresholds(strings.NewReader("SymbolErrors=1\n"), "th", Diagnose); err == nil ||
		!strings.Contains(err.Error(), `unknown counter "SymbolErrors"`) {
		t.Errorf("python-rdma's name: %v", err)
	}
}
