package cmdutil

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
	AddCommonFlags(fs, &c, "")
	if err := fs.Parse([]string{"-z", path, "-t", "900"}); err != nil {
		t.Fatal(err)
	}
	if err := ApplyDiagConfig(fs, &c); err != nil {
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

// retries= in ibdiag.conf (ibtool's own key) and --retries set the
// resends of every MAD; the command line wins; 0 means none.
func TestRetriesFromConfigAndFlag(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ibdiag.conf")
	os.WriteFile(path, []byte("retries=7\n"), 0o644)
	for _, tc := range []struct {
		args []string
		want int
		err  string
	}{
		{[]string{"-z", path}, 7, ""},
		{[]string{"-z", path, "--retries", "9"}, 9, ""},
		{[]string{"-z", path, "--retries", "0"}, -1, ""},
		{[]string{"-z", "/nonexistent"}, 3, ""}, // the command's default
		{[]string{"-z", path, "--retries", "101"}, 0, `invalid --retries "101": want a number of resends from 0 to 100`},
		{[]string{"-z", path, "--retries", "x"}, 0, `invalid --retries "x"`},
	} {
		fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
		var c Common
		AddCommonFlags(fs, &c, "")
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		if err := ApplyDiagConfig(fs, &c); err != nil {
			t.Fatal(err)
		}
		got, err := c.RetryCount(3)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) || ExitCodeOf(err) != ExitUsage {
				t.Errorf("%v: %v, want usage error %q", tc.args, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%v: %d, %v; want %d", tc.args, got, err, tc.want)
		}
	}
}

// FuzzDiagConfig: any ibdiag.conf reads without a panic, and what it sets
// is what its lines say.
//
//	go test ./internal/cli -run XXX -fuzz FuzzDiagConfig -fuzztime 30s
func FuzzDiagConfig(f *testing.F) {
	f.Add([]byte("#CA=commented\nCA=mlx5_1\nPortNumber=2\ntimeout=250\nretries=5\nMLX_EPI=false\nsa_key=0x5\n"))
	f.Add([]byte("CA"))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "ibdiag.conf")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		cfg, err := readDiagConfig(path)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %q", err)
			}
			return
		}
		for _, v := range []string{cfg.CA, cfg.Port, cfg.Timeout, cfg.Retries, cfg.MKey, cfg.SAKey} {
			if strings.Contains(v, "\n") {
				t.Fatalf("a value spans lines: %q", v)
			}
		}
	})
}
