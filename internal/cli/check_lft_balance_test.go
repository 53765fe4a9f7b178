package cli

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ibtool/ibtool/internal/simfabric"
)

// lftInputs writes the C tools' dump_lfts output and an ibnetdiscover
// cache of a shared fabric, as check_lft_balance's usage says to make them.
func lftInputs(t *testing.T, topo string) (lfts, cacheFile string) {
	t.Helper()
	f := sharedFabric(t, topo)
	dir := t.TempDir()
	cacheFile = filepath.Join(dir, "fabric.cache")
	if r := f.RunC(context.Background(), "", "ibnetdiscover", "--cache", cacheFile); r.Code != 0 {
		t.Fatalf("ibnetdiscover --cache: %d %s", r.Code, r.Stderr)
	}
	r := f.RunC(context.Background(), "", "dump_lfts")
	if r.Code != 0 {
		t.Fatalf("dump_lfts: %d %s", r.Code, r.Stderr)
	}
	return r.Stdout, cacheFile
}

func TestCheckLftBalanceMatchesInfinibandDiags(t *testing.T) {
	for _, topo := range []string{"tiny.net", "torus-3x3.net", "fattree-50.net"} {
		f := sharedFabric(t, topo)
		lfts, cacheFile := lftInputs(t, topo)
		dir := filepath.Dir(cacheFile)
		// As dumped, and skewed: every route of one port moved to another,
		// which unbalances the switches (the fat tree's have 36 ports, so
		// -e's heuristics apply there).
		skewed := regexp.MustCompile(`(?m)^(0x[0-9a-f]{4}) 013 `).ReplaceAllString(lfts, "$1 012 ")
		for name, text := range map[string]string{"lfts": lfts, "skewed": skewed} {
			file := filepath.Join(dir, name)
			if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			for _, flags := range []string{"", "-v", "-e", "-e -v"} {
				conformCompat(t, f, "", "check_lft_balance", append([]string{"-l", file, "-i", cacheFile}, strings.Fields(flags)...)...)
			}
		}
		conformCompat(t, f, "", "check_lft_balance", "-l", filepath.Join(dir, "missing"), "-i", cacheFile, "-v")
	}
	f := sharedFabric(t, "tiny.net")
	// Usage, exit 2.
	conformCompat(simfabric.ExpectFailure(t), f, "", "check_lft_balance")
	conformCompat(simfabric.ExpectFailure(t), f, "", "check_lft_balance", "-l", "x")
}

// Without -l and -i, ibtool reads the fabric and its tables itself and
// gives the script's answer for them.
func TestCheckLftBalanceLive(t *testing.T) {
	for _, topo := range []string{"tiny.net", "fattree-50.net"} {
		f := sharedFabric(t, topo)
		lfts, cacheFile := lftInputs(t, topo)
		file := filepath.Join(filepath.Dir(cacheFile), "lfts")
		os.WriteFile(file, []byte(lfts), 0o644)
		want := runSim(f, "", "check_lft_balance", "-v", "-l", file, "-i", cacheFile)
		got := runSim(f, "", "check_lft_balance", "-v")
		if got.Code != 0 || got.Stdout != want.Stdout || !strings.Contains(got.Stdout, "Switch Port Usage") {
			t.Errorf("%s live (exit %d):\n%s\nfrom the files:\n%s", topo, got.Code, got.Stdout+got.Stderr, want.Stdout)
		}
	}
}
