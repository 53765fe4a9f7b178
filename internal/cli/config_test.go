package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

func TestDiagConfig(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ibdiag.conf")
	os.WriteFile(path, []byte("#CA=commented\nCA=mlx5_1\nPortNumber=2\ntimeout=250\nMLX_EPI=false\n m_key=ignored (leading space)\nsa_key=0x5\n"), 0o644)
	fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
	var c Common
	addCommonFlags(fs, &c, "")
	if err := fs.Parse([]string{"-z", path, "-t", "900"}); err != nil {
		t.Fatal(err)
	}
	if err := applyDiagConfig(fs, &c); err != nil {
		t.Fatal(err)
	}
	if c.CA != "mlx5_1" || c.Port != "2" || c.Timeout != "900" || c.MlxEPI || c.MKey != "" || c.SAKey != "0x5" {
		t.Fatalf("config applied as %+v", c)
	}
}

func TestDiagConfigMissing(t *testing.T) {
	// The C tools ignore a missing file, even one named with -z.
	if _, err := readDiagConfig("/nonexistent/ibdiag.conf"); err != nil {
		t.Fatalf("a missing config must be ignored: %v", err)
	}
	if _, err := readDiagConfig(t.TempDir()); err == nil || !strings.Contains(err.Error(), "cannot read config file") {
		t.Fatalf("an unreadable config must be an error: %v", err)
	}
}
