package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ibtool/ibtool/internal/cli/cmdutil"
)

// Man pages, section 8, generated from the command tree: ibtool.8 and one
// ibtool-<command>.8 per command (named so, not after the C tool, so they
// install beside infiniband-diags' own pages). The roff is plain man(7)
// macros written here; cobra's doc package would need go-md2man.

// WriteManPages writes every page into dir and returns their file names.
// date (for example "2026-11-25") goes in each page's header.
func WriteManPages(dir, date string) ([]string, error) {
	root := newRoot(&cmdutil.Env{IO: cmdutil.IO{Out: os.Stdout, Err: os.Stderr}}, "")
	var files []string
	for _, c := range append([]*cobra.Command{root}, root.Commands()...) {
		if !c.IsAvailableCommand() && c != root {
			continue
		}
		name := manName(c)
		var b strings.Builder
		writeManPage(&b, c, date)
		if err := os.WriteFile(filepath.Join(dir, name+".8"), []byte(b.String()), 0o644); err != nil {
			return files, err
		}
		files = append(files, name+".8")
	}
	return files, nil
}

// manName is a command's page name: ibtool, or ibtool-<command>.
func manName(c *cobra.Command) string {
	if !c.HasParent() {
		return c.Name()
	}
	return c.Root().Name() + "-" + c.Name()
}

func writeManPage(b *strings.Builder, c *cobra.Command, date string) {
	title := strings.ToUpper(manName(c))
	fmt.Fprintf(b, ".TH %q 8 %q \"ibtool %s\" \"InfiniBand diagnostics\"\n", title, date, roffEscape(cmdutil.Version))
	b.WriteString(".SH NAME\n")
	fmt.Fprintf(b, "%s \\- %s\n", roffEscape(manName(c)), roffEscape(c.Short))

	b.WriteString(".SH SYNOPSIS\n")
	use := c.UseLine()
	if c.HasAvailableSubCommands() {
		use = c.CommandPath() + " <command> [flags]"
	}
	fmt.Fprintf(b, ".nf\n%s\n", roffLines(use))
	if c.Annotations[cmdutil.AnnotLink] == "true" {
		fmt.Fprintf(b, "%s\n", roffLines(strings.TrimPrefix(c.UseLine(), c.Root().Name()+" ")))
	}
	b.WriteString(".fi\n")

	b.WriteString(".SH DESCRIPTION\n")
	desc := c.Long
	if desc == "" {
		desc = c.Short
	}
	writeManText(b, desc)
	if c.Annotations[cmdutil.AnnotLink] == "true" {
		fmt.Fprintf(b, ".PP\nRun through a link named \\fB%s\\fR (see \\fBibtool\\-install\\-links\\fR(8)), it takes the\noptions of the C tool of that name and prints what that tool prints.\n",
			roffEscape(c.Name()))
	}

	if c.HasExample() {
		b.WriteString(".SH EXAMPLES\n.nf\n")
		b.WriteString(roffLines(c.Example))
		b.WriteString("\n.fi\n")
	}

	if c.HasAvailableLocalFlags() {
		b.WriteString(".SH OPTIONS\n")
		writeManFlags(b, c.LocalFlags())
	}
	if c.HasAvailableInheritedFlags() {
		b.WriteString(".SH GLOBAL OPTIONS\n")
		writeManFlags(b, c.InheritedFlags())
	}

	if c.HasAvailableSubCommands() {
		b.WriteString(".SH COMMANDS\n")
		for _, sub := range c.Commands() {
			if sub.IsAvailableCommand() {
				fmt.Fprintf(b, ".TP\n\\fB%s\\fR(8)\n%s\n", roffEscape(manName(sub)), roffEscape(sub.Short))
			}
		}
	}

	b.WriteString(".SH SEE ALSO\n")
	var see []string
	if c.HasParent() {
		see = append(see, "\\fBibtool\\fR(8)")
	}
	if c.Annotations[cmdutil.AnnotLink] == "true" {
		see = append(see, fmt.Sprintf("\\fB%s\\fR(8) of infiniband\\-diags or rdma\\-core", roffEscape(c.Name())))
	}
	if len(see) == 0 {
		see = append(see, "the \\fBibtool\\-\\fR\\fIcommand\\fR(8) pages, \\fBinfiniband\\-diags\\fR(8)")
	}
	b.WriteString(strings.Join(see, ", ") + "\n")
}

// writeManText writes free text: blank lines become paragraphs, indented
// lines are kept as they are (usage tables, examples).
func writeManText(b *strings.Builder, text string) {
	inPre := false
	for _, line := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		pre := strings.HasPrefix(line, " ") || strings.HasPrefix(line, "\t")
		switch {
		case strings.TrimSpace(line) == "":
			if inPre {
				b.WriteString(".fi\n")
				inPre = false
			}
			b.WriteString(".PP\n")
			continue
		case pre && !inPre:
			b.WriteString(".nf\n")
			inPre = true
		case !pre && inPre:
			b.WriteString(".fi\n")
			inPre = false
		}
		b.WriteString(roffLine(line) + "\n")
	}
	if inPre {
		b.WriteString(".fi\n")
	}
}

func writeManFlags(b *strings.Builder, fs *pflag.FlagSet) {
	var flags []*pflag.Flag
	fs.VisitAll(func(f *pflag.Flag) {
		if !f.Hidden {
			flags = append(flags, f)
		}
	})
	sort.SliceStable(flags, func(i, j int) bool { return flags[i].Name < flags[j].Name })
	for _, f := range flags {
		var head string
		if f.Shorthand != "" && f.ShorthandDeprecated == "" {
			head = fmt.Sprintf("\\fB\\-%s\\fR, ", roffEscape(f.Shorthand))
		}
		head += fmt.Sprintf("\\fB\\-\\-%s\\fR", roffEscape(f.Name))
		varname, usage := pflag.UnquoteUsage(f)
		if varname != "" {
			head += " \\fI" + roffEscape(varname) + "\\fR"
		}
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" && f.DefValue != "[]" {
			usage += fmt.Sprintf(" (default %s)", f.DefValue)
		}
		fmt.Fprintf(b, ".TP\n%s\n%s\n", head, roffLines(usage))
	}
}

// roffEscape escapes text inside a line: backslashes, and hyphens, which
// roff would otherwise typeset as hyphens rather than minus signs.
func roffEscape(s string) string {
	s = strings.ReplaceAll(s, `\`, `\e`)
	return strings.ReplaceAll(s, "-", `\-`)
}

// roffLine escapes one line of text; a line starting with a control
// character (. or ') gets a zero-width escape so roff prints it.
func roffLine(s string) string {
	s = roffEscape(s)
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "'") {
		s = `\&` + s
	}
	return s
}

func roffLines(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = roffLine(l)
	}
	return strings.Join(lines, "\n")
}
