package ibcheck

// The ibcheck family's report (python-rdma's libibtool/errors.py): the
// record each kind of check leaves for a port, made of internal/health's
// findings, the text python-rdma prints for it (pytext.go words the
// findings) and the summary of the fabric-wide checks. counters.go has
// the counter side; ibcheck.go the commands, which only name their checks
// and how their targets are found.

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/ibtool/ibtool/internal/counters"
	"github.com/ibtool/ibtool/internal/health"
	"github.com/ibtool/ibtool/internal/jsonv"
	"github.com/ibtool/ibtool/internal/mad"
)

// checkKind is what a check looks at; python-rdma groups the output of a
// port's checks by kind, in this order.
type checkKind uint8

const (
	kindNode  checkKind = 1 << iota // the node: SA and SMP agree, the SA has a path
	kindPort                        // the port's state, width and speed
	kindPerf                        // the port's PMA counters
	kindClear                       // a counter reset
)

// String is the kind's name in JSON (key check).
func (k checkKind) String() string {
	switch k {
	case kindNode:
		return "node"
	case kindPort:
		return "port"
	case kindPerf:
		return "counters"
	case kindClear:
		return "clear"
	}
	return "?"
}

// checkError is a failed check: python-rdma's CheckError.
type checkError struct{ msg string }

func (e *checkError) Error() string { return e.msg }

// failedCheck tells whether err is a check that failed (python-rdma's
// CheckError), not one that could not be done.
func failedCheck(err error) bool {
	var ce *checkError
	return errors.As(err, &ce) || errors.Is(err, counters.ErrCAAllPorts)
}

// portRecord puts p through checks in order, the first fatal finding
// ending them, as python-rdma's port checks do: that finding is the
// port's error, the others its warnings.
func portRecord(p *health.Port, checks []health.Check) *checkRecord {
	var warnings []string
	var err error
	for _, f := range health.Run(p, checks...) {
		if f.Fatal {
			err = &checkError{findingText(f, p)}
			continue
		}
		warnings = append(warnings, findingText(f, p))
	}
	return newRecord(kindPort, p, warnings, err)
}

// checkRecord is what one kind of check found on one port: a line of
// python-rdma's output (print_header) with its warnings or error.
type checkRecord struct {
	kind     checkKind
	Check    string         `json:"check"`
	NodeType jsonv.NodeType `json:"node_type"`
	NodeGUID mad.GUID       `json:"node_guid"`
	NodeName string         `json:"node_name"`
	LID      uint16         `json:"lid"`
	Port     int            `json:"port"` // 255: all of a switch's ports
	// Status is ok, warning (something is not at its best) or failed (an
	// error, or a counter beyond its threshold).
	Status   string   `json:"status"`
	Warnings []string `json:"warnings,omitempty"`
	Error    string   `json:"error,omitempty"`
	// Counters are the port's PortCounters (counter checks), with the
	// data counters also in bytes; ExtendedCounters its
	// PortCountersExtended (--json, where the PMA has them); Exceeded the
	// counters beyond their threshold.
	Counters         *lazyPerfJSON  `json:"counters,omitempty"`
	ExtendedCounters *lazyPerfJSON  `json:"extended_counters,omitempty"`
	Exceeded         []ThresholdHit `json:"exceeded,omitempty"`
	// dataCounts prints the data counters (ibdatacounts) instead of the
	// verdict.
	dataCounts *mad.PortCounters

	nodeType mad.NodeType
	portNum  int // the port number the node check's header shows
	err      error
}

func newRecord(kind checkKind, p *health.Port, warnings []string, err error) *checkRecord {
	r := &checkRecord{
		kind: kind, Check: kind.String(),
		NodeType: jsonv.NodeTypeOf(p.Node.NodeType), NodeGUID: p.Node.NodeGUID, NodeName: p.Desc,
		LID: p.EndLID, Port: p.Num, Warnings: warnings,
		nodeType: p.Node.NodeType, portNum: p.Num, err: err,
	}
	switch {
	case err != nil || (kind == kindPerf && len(warnings) > 0):
		r.Status = "failed"
	case len(warnings) > 0:
		r.Status = "warning"
	default:
		r.Status = "ok"
	}
	if err != nil {
		r.Error = err.Error()
	}
	return r
}

// bad reports whether python-rdma counts the record as a bad node or port:
// an error, or counters beyond their thresholds on one port (a switch's
// all-ports sum sends it to the single ports instead).
func (r *checkRecord) bad() bool {
	return r.err != nil || (r.kind == kindPerf && r.Status == "failed" && r.Port != counters.AllPortSelect)
}

// checkStyle is how records are printed.
type checkStyle struct {
	verbose bool // -v: OK records too
	colour  bool // ANSI colours (a terminal without -N)
	// errLine prints an error as "#error:" under the header (the fabric
	// checks); a single check reports it on stderr instead.
	errLine bool
}

func (s checkStyle) paint(code, text string) string {
	if !s.colour {
		return text
	}
	return "\033[1;0" + code + "m" + text + "\033[0;39m"
}

// write prints r as python-rdma does: only with -v or when something is
// wrong, the header line with the verdict, then warnings (and the error).
func (r *checkRecord) write(w io.Writer, s checkStyle) {
	if r.dataCounts != nil {
		writeDataCounts(w, r.LID, r.Port, r.dataCounts)
	}
	if !s.verbose && r.Status == "ok" {
		return
	}
	desc := " "
	if r.NodeName != "" {
		desc = " (" + r.NodeName + ") "
	}
	ports := fmt.Sprintf("port %d:", r.Port)
	if r.Port == counters.AllPortSelect {
		ports = "all ports:"
	}
	switch r.kind {
	case kindPort:
		fmt.Fprintf(w, "Port check lid %d%s%s", r.LID, desc, ports)
	case kindPerf:
		fmt.Fprintf(w, "Error check lid %d%s%s", r.LID, desc, ports)
	case kindClear:
		fmt.Fprintf(w, "Clear counters lid %d%s%s", r.LID, desc, ports)
	case kindNode:
		if r.nodeType == mad.NodeTypeSwitch {
			fmt.Fprintf(w, "# Checking %s: nodeguid %s lid %d\n", pyNodeType(r.nodeType), pyGUID(uint64(r.NodeGUID)), r.LID)
		} else {
			fmt.Fprintf(w, "# Checking %s: nodeguid %s lid %d port %d\n", pyNodeType(r.nodeType), pyGUID(uint64(r.NodeGUID)), r.LID, r.portNum)
		}
		fmt.Fprintf(w, "Node check lid %d:", r.LID)
	}
	switch r.Status {
	case "failed":
		fmt.Fprintln(w, " "+s.paint("31", "FAILED"))
	case "warning":
		fmt.Fprintln(w, " "+s.paint("34", "WARNING"))
	default:
		fmt.Fprintln(w, " "+s.paint("32", "OK"))
	}
	for _, m := range r.Warnings {
		fmt.Fprintln(w, s.paint("34", "#warn: "+m))
	}
	if r.err != nil && s.errLine {
		fmt.Fprintln(w, s.paint("31", "#error: "+r.Error))
	}
}

// colourOut reports whether w is a terminal: python-rdma colours its
// verdicts always, ibtool only on a terminal (and never with -N).
func colourOut(w io.Writer, noColour bool) bool {
	f, ok := w.(*os.File)
	if noColour || !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// checkSummary counts what the fabric-wide checks did.
type checkSummary struct {
	NodesChecked int  `json:"nodes_checked"`
	BadNodes     int  `json:"bad_nodes"`
	PortsChecked *int `json:"ports_checked,omitempty"`
	BadPorts     *int `json:"bad_ports,omitempty"`
	// CounterPortsChecked and PortsBeyondThreshold count the counter
	// checks; PortsCleared the resets.
	CounterPortsChecked  *int `json:"counter_ports_checked,omitempty"`
	PortsBeyondThreshold *int `json:"ports_beyond_threshold,omitempty"`
	PortsCleared         *int `json:"ports_cleared,omitempty"`
}

func summarize(records []*checkRecord, kinds checkKind) checkSummary {
	var n [8]int
	for _, r := range records {
		i := map[checkKind]int{kindNode: 0, kindPort: 2, kindPerf: 4, kindClear: 6}[r.kind]
		n[i]++
		if r.bad() {
			n[i+1]++
		}
	}
	s := checkSummary{NodesChecked: n[0], BadNodes: n[1]}
	if kinds&kindPort != 0 {
		s.PortsChecked, s.BadPorts = &n[2], &n[3]
	}
	if kinds&kindPerf != 0 {
		s.CounterPortsChecked, s.PortsBeyondThreshold = &n[4], &n[5]
	}
	if kinds&kindClear != 0 {
		s.PortsCleared = &n[6]
	}
	return s
}

// write prints python-rdma's "## Summary" lines.
func (s checkSummary) write(w io.Writer) {
	fmt.Fprintf(w, "## Summary: %d nodes checked, %d bad nodes found\n", s.NodesChecked, s.BadNodes)
	if s.PortsChecked != nil {
		fmt.Fprintf(w, "##          %d ports checked, %d ports with bad state found\n", *s.PortsChecked, *s.BadPorts)
	}
	if s.CounterPortsChecked != nil {
		fmt.Fprintf(w, "##          %d ports checked, %d ports have errors beyond threshold\n", *s.CounterPortsChecked, *s.PortsBeyondThreshold)
	}
	if s.PortsCleared != nil {
		fmt.Fprintf(w, "##          %d port counters cleared.\n", *s.PortsCleared)
	}
}

// fabricCheckResult is a fabric-wide check's result: every record, in
// fabric order, and the summary.
type fabricCheckResult struct {
	Records []*checkRecord `json:"checks"`
	Summary checkSummary   `json:"summary"`
	// Errors lists the ports whose checks could not be done (no reply, a
	// bad MAD status): each is also a failed record.
	Errors []CheckErrorDoc `json:"errors"`
	// Reset is what was (or, with --dry-run, would be) reset.
	Reset *ResetDoc `json:"reset,omitempty"`

	style      checkStyle
	kinds      checkKind
	thresholds *counters.Thresholds
}

// CheckErrorDoc is one port whose check failed to run.
type CheckErrorDoc struct {
	NodeGUID mad.GUID `json:"node_guid"`
	LID      uint16   `json:"lid"`
	Port     int      `json:"port"`
	Check    string   `json:"check"`
	Error    string   `json:"error"`
}

func (r *fabricCheckResult) finish() {
	r.Summary = summarize(r.Records, r.kinds)
	r.Errors = []CheckErrorDoc{}
	for _, rec := range r.Records {
		if rec.err != nil && !failedCheck(rec.err) {
			r.Errors = append(r.Errors, CheckErrorDoc{rec.NodeGUID, rec.LID, rec.Port, rec.Check, rec.Error})
		}
	}
}

func (r *fabricCheckResult) WriteText(out io.Writer) error {
	w := bufio.NewWriter(out)
	for _, rec := range r.Records {
		rec.write(w, r.style)
	}
	if r.Reset != nil {
		r.Reset.write(w)
	}
	r.Summary.write(w)
	return w.Flush()
}

// parallelWorkers bounds the goroutines parallel runs at once. The MAD
// engine bounds what is in flight (and the SA, one destination, gets
// rpc.DefaultSADestWindow MADs at a time), so more goroutines only wait
// there: one per node of a 2000-node fabric took 20 MB of stacks.
const parallelWorkers = 64

// parallel runs fn for 0..n-1, up to parallelWorkers at once, and waits.
func parallel(n int, fn func(i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(n, parallelWorkers) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				fn(i)
			}
		}()
	}
	wg.Wait()
}
