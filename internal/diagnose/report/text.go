// Package report writes a diagnosis (internal/diagnose's Report) for
// people: the text a terminal shows, with a summary table, and one
// self-contained HTML page. The JSON is the Report itself.
package report

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ibtool/ibtool/internal/diagnose"
)

// TextOptions tune the text.
type TextOptions struct {
	// PerCheck is how many findings of each check are listed; the rest
	// are counted ("... and 12 more"). 0 lists them all (--all).
	PerCheck int
}

// DefaultPerCheck is how many findings of a check the text lists unless
// told otherwise: enough to see the pattern, few enough that one noisy
// check does not bury the others.
const DefaultPerCheck = 5

// WriteText writes the report: a line about the fabric and the sweep,
// the summary table, then each check's findings, worst first.
func WriteText(out io.Writer, r *diagnose.Report, opts TextOptions) error {
	w := bufio.NewWriter(out)
	fab := r.Fabric
	status := "the sweep read everything"
	if !r.Complete {
		status = "the sweep is INCOMPLETE: what it could not read is listed under walk"
	}
	fmt.Fprintf(w, "Fabric: %d nodes (%d switches, %d CAs, %d routers), %d links; %s\n\n",
		fab.Nodes, fab.Switches, fab.CAs, fab.Routers, fab.Links, status)
	if err := summaryTable(w, r); err != nil {
		return err
	}
	byCheck := map[string][]*diagnose.Finding{}
	for _, f := range r.Findings {
		byCheck[f.Check] = append(byCheck[f.Check], f)
	}
	for _, s := range r.Summary {
		found := byCheck[s.Check]
		if len(found) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n%s: %s\n", s.Check, counts(s))
		for i, f := range found {
			if opts.PerCheck > 0 && i == opts.PerCheck {
				fmt.Fprintf(w, "  ... and %d more (--all lists them)\n", len(found)-i)
				break
			}
			fmt.Fprintf(w, "  %-7s %s  %s\n", f.Severity, f.Code, Line(f))
		}
	}
	return w.Flush()
}

// counts is "2 errors, 1 warning, 1 info".
func counts(s diagnose.CheckSummary) string {
	word := func(n int, one string) string {
		if n == 1 {
			return "1 " + one
		}
		return strconv.Itoa(n) + " " + one + "s"
	}
	return word(s.Errors, "error") + ", " + word(s.Warnings, "warning") + ", " + word(s.Infos, "info")
}

// summaryTable is one row per check: its errors and warnings, or why it
// did not run.
func summaryTable(w io.Writer, r *diagnose.Report) error {
	rows := [][]string{{"CHECK", "ERRORS", "WARNINGS", "NOTE"}}
	for _, s := range r.Summary {
		row := []string{s.Check, strconv.Itoa(s.Errors), strconv.Itoa(s.Warnings), ""}
		if s.Skipped != "" {
			row = []string{s.Check, "-", "-", "not run: " + s.Skipped}
		}
		rows = append(rows, row)
	}
	return writeTable(w, rows, []bool{false, true, true, false})
}

// writeTable writes rows, the first a header, in an ASCII box, each
// column as wide as its widest cell and right-aligned where right says.
// (Written here rather than with a table library: a library's package
// initialisation would cost every ibtool command at start-up, and this
// is one small table.)
func writeTable(w io.Writer, rows [][]string, right []bool) error {
	widths := make([]int, len(right))
	for _, row := range rows {
		for i, cell := range row {
			widths[i] = max(widths[i], utf8.RuneCountInString(cell))
		}
	}
	var b strings.Builder
	rule := func() {
		for _, n := range widths {
			b.WriteString("+" + strings.Repeat("-", n+2))
		}
		b.WriteString("+\n")
	}
	rule()
	for i, row := range rows {
		for j, cell := range row {
			pad := strings.Repeat(" ", widths[j]-utf8.RuneCountInString(cell))
			if right[j] && i > 0 {
				cell = pad + cell
			} else {
				cell += pad
			}
			b.WriteString("| " + cell + " ")
		}
		b.WriteString("|\n")
		if i == 0 {
			rule()
		}
	}
	rule()
	_, err := io.WriteString(w, b.String())
	return err
}

// Line is a finding as one line of text: where, then what.
func Line(f *diagnose.Finding) string {
	if f.At == nil {
		return f.Message
	}
	s := fmt.Sprintf("%q (0x%016x)", f.At.NodeName, f.At.NodeGUID)
	if f.At.Port != diagnose.NoPort {
		s += " port " + strconv.Itoa(f.At.Port)
	}
	if r := f.Remote; r != nil {
		s += fmt.Sprintf(" -> %q (0x%016x) port %d", r.NodeName, uint64(r.NodeGUID), r.Port)
	}
	return s + ": " + f.Message
}
