package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ibtool/ibtool/internal/cli/cmdutil"
)

func TestCompletionScripts(t *testing.T) {
	for shell, marks := range map[string][]string{
		"bash": {"__start_ibtool", "complete -o default -F __start_ibtool ibtool", "__complete"},
		"zsh":  {"#compdef ibtool", "__complete"},
		"fish": {"complete -c ibtool", "__complete"},
	} {
		r := runWith(nil, "ibtool", "completion", shell)
		if r.code != 0 || r.stderr != "" {
			t.Fatalf("completion %s: exit %d, stderr %q", shell, r.code, r.stderr)
		}
		for _, m := range marks {
			if !strings.Contains(r.stdout, m) {
				t.Errorf("completion %s: no %q in the script", shell, m)
			}
		}
	}
	for _, args := range [][]string{{"completion"}, {"completion", "tcsh"}, {"completion", "bash", "zsh"}} {
		r := runWith(nil, append([]string{"ibtool"}, args...)...)
		if r.code != cmdutil.ExitUsage || r.stdout != "" || !strings.HasPrefix(r.stderr, "completion: ") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want a usage error", args, r.code, r.stdout, r.stderr)
		}
	}
}

// complete runs the completion the shell scripts ask for and returns the
// candidates (the directive line removed).
func complete(t *testing.T, args ...string) []string {
	t.Helper()
	r := runWith(nil, append([]string{"ibtool", "__complete"}, args...)...)
	if r.code != 0 {
		t.Fatalf("__complete %v: exit %d, stderr %q", args, r.code, r.stderr)
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) == 0 || !strings.HasPrefix(lines[len(lines)-1], ":") {
		t.Fatalf("__complete %v: no directive in %q", args, r.stdout)
	}
	var out []string
	for _, l := range lines[:len(lines)-1] {
		name, _, _ := strings.Cut(l, "\t") // drop descriptions
		out = append(out, name)
	}
	return out
}

// Node names come from the cache: NodeDescription host parts, or the
// node-name-map's names (tiny.cache holds "Switch1", "sw2 desc", "hca
// one", "Hca2" and "Hca3").
func TestCompleteNodeNames(t *testing.T) {
	cache, err := filepath.Abs("../cache/testdata/tiny.cache")
	if err != nil {
		t.Fatal(err)
	}
	nameMap := filepath.Join(t.TempDir(), "map")
	if err := os.WriteFile(nameMap, []byte("0x100003 node-b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv(CompletionCacheEnv, "")
	for _, tc := range []struct {
		env  string
		args []string
		want string
	}{
		{"", []string{"ibprintca", "--load-cache", cache, ""}, "Hca2 Hca3 Switch1 hca sw2"},
		{"", []string{"ibfindnodesusing", "--load-cache", cache, "H"}, "Hca2 Hca3"},
		{"", []string{"ibfindnodesusing", "--load-cache", cache, "sw2", ""}, ""}, // a port number
		{"", []string{"ibprintca", "--load-cache", cache, "--node-name-map", nameMap, ""}, "Hca3 Switch1 hca node-b sw2"},
		{"/nonexistent", []string{"ibprintca", "--load-cache", cache, ""}, "Hca2 Hca3 Switch1 hca sw2"}, // the flag first
		{cache, []string{"perfquery", ""}, "Hca2 Hca3 Switch1 hca sw2"},
		{cache, []string{"perfquery", "Hca2", ""}, ""},
		{cache, []string{"ibtracert", "Hca2", "s"}, "sw2"},
		{cache, []string{"smpquery", "nodeinfo", "Sw"}, "Switch1"},
		{cache, []string{"smpquery", "Port"}, "PortInfo PortInfoExtended"},
		{cache, []string{"smpquery", "sw"}, "SwitchInfo"},                   // ops by their names, case insensitive
		{cache, []string{"ibnetdiscover", ""}, ""},                          // no node argument
		{"", []string{"perfquery", ""}, ""},                                 // no cache
		{"", []string{"ibprintca", "--load-cache", "/nonexistent", ""}, ""}, // a cache that does not load
		{"/nonexistent", []string{"perfquery", ""}, ""},
	} {
		t.Setenv(CompletionCacheEnv, tc.env)
		got := strings.Join(complete(t, tc.args...), " ")
		if got != tc.want {
			t.Errorf("%s=%q, complete %q: got %q, want %q", CompletionCacheEnv, tc.env, tc.args, got, tc.want)
		}
	}
}

func TestCompleteCommandsAndFlags(t *testing.T) {
	got := complete(t, "perf")
	if strings.Join(got, " ") != "perfquery" {
		t.Errorf("commands starting with perf: %q", got)
	}
	got = complete(t, "perfquery", "--exte")
	if strings.Join(got, " ") != "--extended --extended_speeds" {
		t.Errorf("perfquery flags starting with --exte: %q", got)
	}
	got = complete(t, "completion", "")
	if strings.Join(got, " ") != "bash zsh fish" {
		t.Errorf("completion shells: %q", got)
	}
}

// Flag values complete where the set is known: topology's --format from
// its declared formats, -C/--Ca from the transport's CAs (the fake sysfs
// has mlx4_0 with ports 1 and 2, mlx5_0 and mlx5_1 with port 1), -P/--Port
// from the ports of the CA given with -C, or of every CA.
func TestCompleteFlagValues(t *testing.T) {
	root := fakeSysfs(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"topology", "--format", ""}, "slurm slurm-yaml dot"},
		{[]string{"topology", "--format="}, "slurm slurm-yaml dot"}, // the script puts back "--format="
		{[]string{"perfquery", "-C", ""}, "mlx4_0 mlx5_0 mlx5_1"},
		{[]string{"ibnetdiscover", "--Ca", ""}, "mlx4_0 mlx5_0 mlx5_1"},
		{[]string{"perfquery", "-C", "mlx4_0", "-P", ""}, "1 2"},
		{[]string{"smpquery", "--Ca=mlx5_1", "--Port", ""}, "1"},
		{[]string{"sminfo", "-P", ""}, "1 2"},                   // no -C: every CA's ports
		{[]string{"perfquery", "-C", "nonesuch", "-P", ""}, ""}, // an unknown CA has none
	} {
		r := runKernel(t, root, append([]string{"ibtool", "__complete"}, tc.args...)...)
		lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
		if r.code != 0 || len(lines) == 0 || lines[len(lines)-1] != ":4" {
			t.Errorf("__complete %q: exit %d, %q, stderr %q; want candidates and directive :4 (no files)", tc.args, r.code, r.stdout, r.stderr)
			continue
		}
		got := lines[:len(lines)-1]
		if strings.Join(got, " ") != tc.want {
			t.Errorf("__complete %q: got %q, want %q", tc.args, got, tc.want)
		}
	}
	// No transport, or one that fails: nothing, and no error.
	r := runWith(nil, "ibtool", "__complete", "perfquery", "-C", "")
	if r.code != 0 || strings.TrimSpace(r.stdout) != ":4" {
		t.Errorf("-C without a transport: exit %d, %q", r.code, r.stdout)
	}
}
