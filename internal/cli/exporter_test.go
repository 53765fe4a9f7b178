package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ibtool/ibtool/internal/cli/cmd/exporter"
	"github.com/ibtool/ibtool/internal/cli/cmdutil"
)

// fakeExporter writes an ibtool-exporter into dir that prints its
// arguments, one a line, and exits 3.
func fakeExporter(t *testing.T, dir string) {
	t.Helper()
	script := "#!/bin/sh\nfor a in \"$@\"; do echo \"$a\"; done\nexit 3\n"
	if err := os.WriteFile(filepath.Join(dir, exporter.Binary), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
}

// `ibtool exporter` runs ibtool-exporter from PATH with its arguments as
// they are (flags ibtool does not know included) and its exit status.
func TestExporterRunsTheExporterBinary(t *testing.T) {
	dir := t.TempDir()
	fakeExporter(t, dir)
	t.Setenv("PATH", dir)
	var out, errOut bytes.Buffer
	env := &cmdutil.Env{IO: cmdutil.IO{In: strings.NewReader(""), Out: &out, Err: &errOut}}
	args := []string{"--web.listen-address", ":9999", "--listen-address=:1", "--help", "-C", "mlx5_0"}
	code := run(append([]string{"ibtool", "exporter"}, args...), env)
	if code != 3 || out.String() != strings.Join(args, "\n")+"\n" || errOut.String() != "" {
		t.Errorf("exit %d, stdout %q, stderr %q; want 3 and the arguments", code, out.String(), errOut.String())
	}
}

// Beside the ibtool binary comes first; without one anywhere, a one-line
// error.
func TestFindExporter(t *testing.T) {
	beside, inPath := t.TempDir(), t.TempDir()
	fakeExporter(t, beside)
	fakeExporter(t, inPath)
	t.Setenv("PATH", inPath)
	self := filepath.Join(beside, "ibtool")
	if p, err := exporter.Find(self); err != nil || p != filepath.Join(beside, exporter.Binary) {
		t.Errorf("beside ibtool: %q, %v", p, err)
	}
	if p, err := exporter.Find(filepath.Join(t.TempDir(), "ibtool")); err != nil || p != filepath.Join(inPath, exporter.Binary) {
		t.Errorf("from PATH: %q, %v", p, err)
	}

	t.Setenv("PATH", t.TempDir())
	var out, errOut bytes.Buffer
	env := &cmdutil.Env{IO: cmdutil.IO{In: strings.NewReader(""), Out: &out, Err: &errOut}}
	code := run([]string{"ibtool", "exporter", "--once"}, env)
	msg := errOut.String()
	if code != cmdutil.ExitFailure || !strings.Contains(msg, "ibtool-exporter not found beside ") || !strings.Contains(msg, "or in PATH") ||
		strings.Count(msg, "\n") != 1 || out.Len() != 0 {
		t.Errorf("exit %d, stderr %q, stdout %q; want one line saying ibtool-exporter is missing", code, msg, out.String())
	}
}
