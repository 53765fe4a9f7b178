// Package report writes a diagnosis (internal/diagnose's Report) for
// people: the text a terminal shows, with a summary table, and one
// self-contained HTML page. The JSON is the Report itself.
package report

import (
	"bufio"
	"fmt"
	"io"
	"strconv"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"

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
	t := tablewriter.NewTable(w,
		tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{Symbols: tw.NewSymbols(tw.StyleASCII)})),
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAlignment(tw.AlignLeft),
		tablewriter.WithRowAlignmentConfig(tw.CellAlignment{PerColumn: []tw.Align{tw.AlignLeft, tw.AlignRight, tw.AlignRight, tw.AlignLeft}}),
	)
	t.Header("CHECK", "ERRORS", "WARNINGS", "NOTE")
	for _, s := range r.Summary {
		row := []string{s.Check, strconv.Itoa(s.Errors), strconv.Itoa(s.Warnings), ""}
		if s.Skipped != "" {
			row = []string{s.Check, "-", "-", "not run: " + s.Skipped}
		}
		if err := t.Append(row); err != nil {
			return err
		}
	}
	return t.Render()
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
