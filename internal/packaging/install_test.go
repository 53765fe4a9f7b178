package packaging

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ibtool/ibtool/internal/simfabric"
)

// make install puts the classic-name links in PREFIX/lib/ibtool/bin, not
// beside the binary; make uninstall removes what install put there and
// nothing else.
func TestMakeInstallUninstall(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		simfabric.Missing(t, err)
	}
	repo, err := simfabric.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	prefix := filepath.Join(t.TempDir(), "usr")
	runMake := func(target string) {
		t.Helper()
		out, err := exec.Command("make", "-C", repo, target, "PREFIX="+prefix).CombinedOutput()
		if err != nil {
			t.Fatalf("make %s: %v\n%s", target, err, out)
		}
	}
	runMake("install")
	bin := filepath.Join(prefix, "bin")
	if entries, err := os.ReadDir(bin); err != nil || len(entries) != 2 || entries[0].Name() != "ibtool" || entries[1].Name() != "ibtool-exporter" {
		t.Errorf("%s holds %v (%v); want only ibtool and ibtool-exporter", bin, entries, err)
	}
	checkExporterUnit(t, prefix)
	links := filepath.Join(prefix, "lib/ibtool/bin")
	for _, name := range []string{"perfquery", "ibv_devinfo", "ibstat"} {
		target, err := os.Readlink(filepath.Join(links, name))
		if err != nil || filepath.IsAbs(target) || filepath.Join(links, target) != filepath.Join(bin, "ibtool") {
			t.Errorf("%s/%s -> %q, %v; want a relative link to %s/ibtool", links, name, target, err, bin)
		}
	}
	// The verbs commands run in ibtool-verbs, installed where ibtool looks:
	// ../lib/ibtool from its directory.
	if _, err := os.Stat(filepath.Join(prefix, "lib/ibtool/ibtool-verbs")); err != nil {
		t.Errorf("ibtool-verbs not installed: %v", err)
	}
	// (libibverbs is installed here: the Makefile's libibverbs-dev brings it.)
	if out, err := exec.Command(filepath.Join(links, "ibv_devinfo"), "-l").CombinedOutput(); err != nil || !strings.Contains(string(out), "HCAs found") &&
		!strings.Contains(string(out), "HCA found") {
		t.Errorf("ibv_devinfo -l through the installed link: %v, %q", err, out)
	}
	out, err := exec.Command(filepath.Join(links, "ibstat"), "-h").CombinedOutput()
	if len(out) == 0 || err == nil {
		t.Errorf("ibstat -h through the installed link: %v, %q; want its usage and exit 2", err, out)
	}
	for _, p := range []string{"share/man/man8/ibtool-perfquery.8", "share/bash-completion/completions/ibtool",
		"share/zsh/site-functions/_ibtool", "share/fish/vendor_completions.d/ibtool.fish"} {
		if _, err := os.Stat(filepath.Join(prefix, p)); err != nil {
			t.Errorf("not installed: %v", err)
		}
	}

	checkLinkCompletion(t, prefix, links)

	// Someone else's file among the links stays, and so does its directory.
	mine := filepath.Join(links, "my-script")
	if err := os.WriteFile(mine, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	runMake("uninstall")
	if _, err := os.Stat(mine); err != nil {
		t.Errorf("uninstall removed a file it did not install: %v", err)
	}
	os.Remove(mine)
	runMake("uninstall") // the empty directories go now
	var left []string
	filepath.WalkDir(prefix, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			left = append(left, p)
		}
		return nil
	})
	if len(left) > 0 {
		t.Errorf("left after uninstall: %q", left)
	}
	if _, err := os.Stat(filepath.Join(prefix, "lib/ibtool")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s/lib/ibtool is still there: %v", prefix, err)
	}
}

// checkExporterUnit: the exporter's unit starts the installed exporter,
// and systemd reads it without a complaint; `ibtool exporter` finds the
// exporter beside ibtool.
func checkExporterUnit(t *testing.T, prefix string) {
	t.Helper()
	unit := filepath.Join(prefix, "lib/systemd/system/ibtool-exporter.service")
	b, err := os.ReadFile(unit)
	if err != nil {
		t.Fatalf("the unit is not installed: %v", err)
	}
	exporter := filepath.Join(prefix, "bin/ibtool-exporter")
	if !strings.Contains(string(b), "\nExecStart="+exporter+" $ARGS\n") {
		t.Errorf("the unit does not start %s:\n%s", exporter, b)
	}
	out, err := exec.Command(filepath.Join(prefix, "bin/ibtool"), "exporter", "--version").CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "ibtool-exporter ") {
		t.Errorf("ibtool exporter --version: %v, %q", err, out)
	}
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Logf("no systemd-analyze: the unit is not verified (%v)", err)
		return
	}
	// verify reports unknown settings and bad values but exits 0: any
	// output is a complaint.
	if out, err := exec.Command(analyze, "verify", unit).CombinedOutput(); err != nil || len(out) > 0 {
		t.Errorf("systemd-analyze verify %s: %v\n%s", unit, err, out)
	}
}

// checkLinkCompletion completes "smpquery Node" in bash with
// bash-completion loading the installed completions/smpquery, as it does
// on the first TAB after a command's name: with the links first in PATH it
// offers smpquery's operations; with a C tool of that name first, nothing
// (asking the C tool to complete would run it).
func checkLinkCompletion(t *testing.T, prefix, links string) {
	t.Helper()
	const bashCompletion = "/usr/share/bash-completion/bash_completion"
	if _, err := os.Stat(bashCompletion); err != nil {
		simfabric.Missing(t, err)
	}
	cTools := t.TempDir()
	if err := os.WriteFile(filepath.Join(cTools, "smpquery"), []byte("#!/bin/sh\necho ran >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	complete := func(path string) string {
		t.Helper()
		// compopt works only inside a real completion: a no-op here.
		cmd := exec.Command("bash", "--norc", "-c", `source "$1"
compopt() { :; }
_completion_loader smpquery
COMP_WORDS=(smpquery Node); COMP_CWORD=1; COMP_LINE="smpquery Node"; COMP_POINT=${#COMP_LINE}
fn=$(complete -p smpquery | sed 's/.* -F \([^ ]*\) .*/\1/')
"$fn" smpquery Node smpquery
echo "${COMPREPLY[*]}"`, "bash", bashCompletion)
		cmd.Env = append(os.Environ(), "PATH="+path, "XDG_DATA_DIRS="+filepath.Join(prefix, "share"))
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("bash completion: %v\n%s", err, out)
		}
		return strings.TrimSpace(string(out))
	}
	if got := complete(links + ":" + os.Getenv("PATH")); got != "NodeInfo NodeDesc" {
		t.Errorf("smpquery Node<TAB> through the ibtool link: %q, want \"NodeInfo NodeDesc\"", got)
	}
	if got := complete(cTools + ":" + links + ":" + os.Getenv("PATH")); got != "" {
		t.Errorf("smpquery Node<TAB> with a C smpquery first in PATH: %q, want nothing", got)
	}
}
