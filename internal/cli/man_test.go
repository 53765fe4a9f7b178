package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

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
