package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/internal/cli/cmdutil"
)

// Every command gets a page that groff formats without a warning, with its
// synopsis, its flags and, for tool-named commands, the link's synopsis.
func TestManPages(t *testing.T) {
	dir := t.TempDir()
	files, err := WriteManPages(dir, "2026-01-02")
	if err != nil {
		t.Fatal(err)
	}
	root := newRoot(&cmdutil.Env{}, "")
	want := []string{"ibtool.8"}
	for _, c := range root.Commands() {
		if c.IsAvailableCommand() {
			want = append(want, "ibtool-"+c.Name()+".8")
		}
	}
	slices.Sort(want)
	slices.Sort(files)
	if !slices.Equal(files, want) {
		t.Fatalf("pages %q, want %q", files, want)
	}
	groff, err := exec.LookPath("groff")
	if err != nil {
		if ci, _ := strconv.ParseBool(os.Getenv("CI")); ci {
			t.Fatal("groff is missing (Debian: groff-base); CI checks the man pages with it")
		}
		t.Log("groff is missing: the pages are not formatted")
	}
	var paths []string
	for _, f := range files {
		paths = append(paths, filepath.Join(dir, f))
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		page := string(b)
		if !strings.HasPrefix(page, `.TH "`+strings.ToUpper(strings.TrimSuffix(f, ".8"))+`" 8 "2026-01-02"`) ||
			!strings.Contains(page, "\n.SH NAME\n") || !strings.Contains(page, "\n.SH SYNOPSIS\n") {
			t.Errorf("%s: no title, NAME or SYNOPSIS:\n%s", f, page)
		}
	}
	if groff != "" {
		// One groff run for all pages (its warnings name the file).
		out, err := exec.Command(groff, append([]string{"-man", "-ww", "-z"}, paths...)...).CombinedOutput()
		if err != nil || len(out) > 0 {
			t.Errorf("groff: %v\n%s", err, out)
		}
	}
	pq, _ := os.ReadFile(filepath.Join(dir, "ibtool-perfquery.8"))
	for _, s := range []string{
		"\n.nf\nibtool perfquery [options] [<lid|guid> [[port(s)] [reset_mask]]] [flags]\nperfquery [options]",
		"\n.TP\n\\fB\\-x\\fR, \\fB\\-\\-extended\\fR\nshow extended port counters\n",
		"\n.SH EXAMPLES\n",
	} {
		if !strings.Contains(string(pq), s) {
			t.Errorf("ibtool-perfquery.8 lacks %q", s)
		}
	}
}

// EXIT STATUS, ENVIRONMENT and FILES (docs/exit-codes.md, the variables
// and files ibtool reads): every page has the first two; each command's
// page lists what applies to it, ibtool.8 all of it.
func TestManSections(t *testing.T) {
	dir := t.TempDir()
	files, err := WriteManPages(dir, "2026-01-02")
	if err != nil {
		t.Fatal(err)
	}
	page := func(name string) string {
		b, err := os.ReadFile(filepath.Join(dir, name+".8"))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for _, f := range files {
		p := page(strings.TrimSuffix(f, ".8"))
		for _, sec := range []string{"EXIT STATUS", "ENVIRONMENT"} {
			if !strings.Contains(p, "\n.SH "+sec+"\n") {
				t.Errorf("%s has no %s", f, sec)
			}
		}
		if strings.Index(p, "\n.SH EXIT STATUS\n") > strings.Index(p, "\n.SH SEE ALSO\n") {
			t.Errorf("%s: EXIT STATUS after SEE ALSO", f)
		}
	}
	// tags are the .TP entries of a section.
	tags := func(p, section string) []string {
		_, rest, ok := strings.Cut(p, "\n.SH "+section+"\n")
		if !ok {
			return nil
		}
		rest, _, _ = strings.Cut(rest, "\n.SH ")
		var out []string
		for _, entry := range strings.Split(rest, ".TP\n")[1:] {
			tag, _, _ := strings.Cut(entry, "\n")
			out = append(out, strings.NewReplacer(`\fB`, "", `\fR`, "", `\-`, "-").Replace(tag))
		}
		return out
	}
	for _, tc := range []struct {
		page, section, want string
	}{
		{"ibtool", "EXIT STATUS", "0 2 3 255 128+N"},
		{"ibtool", "ENVIRONMENT", "IBTOOL_TRANSPORT IBSIM_SOCKNAME IBSIM_SERVER_NAME, IBSIM_SERVER_PORT SIM_HOST SIM_SET_ISSM IBTOOL_SIM_CONNECT_TIMEOUT IBTOOL_LIBIBVERBS IBPATH IBTOOL_CACHE GOMAXPROCS"},
		{"ibtool", "FILES", "/etc/infiniband-diags/ibdiag.conf /etc/rdma/ib-node-name-map /etc/infiniband-diags/error_thresholds /var/cache/infiniband-diags fabric caches /dev/infiniband/umad*, /sys/class/infiniband* libibverbs.so.1"},
		{"ibtool-perfquery", "EXIT STATUS", "0 2 255 128+N"}, // no walk: no 3
		{"ibtool-perfquery", "FILES", "/etc/infiniband-diags/ibdiag.conf /etc/rdma/ib-node-name-map /dev/infiniband/umad*, /sys/class/infiniband*"},
		{"ibtool-ibnetdiscover", "EXIT STATUS", "0 2 3 255 128+N"},
		{"ibtool-ibnetdiscover", "FILES", "/etc/infiniband-diags/ibdiag.conf /etc/rdma/ib-node-name-map fabric caches /dev/infiniband/umad*, /sys/class/infiniband*"},
		{"ibtool-ibqueryerrors", "EXIT STATUS", "0 1 2 3 255 128+N"},
		{"ibtool-saquery", "EXIT STATUS", "0 2 5 22 64 110 255 128+N"},
		{"ibtool-ibchecknode", "EXIT STATUS", "0 2 100 255 128+N"},
		{"ibtool-ibv_devinfo", "ENVIRONMENT", "IBTOOL_LIBIBVERBS GOMAXPROCS"},
		{"ibtool-ibv_devinfo", "FILES", "libibverbs.so.1"},
		{"ibtool-ibhosts", "ENVIRONMENT", "IBTOOL_TRANSPORT IBSIM_SOCKNAME IBSIM_SERVER_NAME, IBSIM_SERVER_PORT SIM_HOST SIM_SET_ISSM IBTOOL_SIM_CONNECT_TIMEOUT IBPATH GOMAXPROCS"},
		{"ibtool-ibidsverify", "FILES", "/etc/rdma/ib-node-name-map /var/cache/infiniband-diags fabric caches /dev/infiniband/umad*, /sys/class/infiniband*"},
		{"ibtool-completion", "ENVIRONMENT", "IBTOOL_CACHE GOMAXPROCS"},
		{"ibtool-decode_mad", "FILES", ""}, // none: no section
	} {
		if got := strings.Join(tags(page(tc.page), tc.section), " "); got != tc.want {
			t.Errorf("%s.8 %s: %q\nwant %q", tc.page, tc.section, got, tc.want)
		}
	}
	// The tables name commands that exist.
	root := newRoot(&cmdutil.Env{}, "")
	named := slices.Clone(fabricWideCommands)
	for name := range manCommandExits() {
		named = append(named, name)
	}
	for _, name := range named {
		if !slices.ContainsFunc(root.Commands(), func(c *cobra.Command) bool { return c.Name() == name }) {
			t.Errorf("the man page tables name %q, no command", name)
		}
	}
}
