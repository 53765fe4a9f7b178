package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ibtool/ibtool/internal/cli/cmdutil"
)

// Every tool command answers "ibtool <cmd> --help" (and -h) with its help
// on stdout, exit 0, and lists --json.
func TestEveryCommandHelp(t *testing.T) {
	if len(commandBuilders) < 20 {
		t.Fatalf("only %d commands registered", len(commandBuilders))
	}
	for _, b := range commandBuilders {
		name := b.name
		for _, flag := range []string{"--help", "-h"} {
			r := runWith(nil, "ibtool", name, flag)
			if r.code != cmdutil.ExitOK || r.stderr != "" || !strings.Contains(r.stdout, "Usage:") {
				t.Errorf("ibtool %s %s: exit %d, stderr %q, stdout %q", name, flag, r.code, r.stderr, r.stdout)
				continue
			}
			if !strings.Contains(r.stdout, "--json") {
				t.Errorf("ibtool %s %s does not list --json:\n%s", name, flag, r.stdout)
			}
		}
	}
}

// A run builds only the command it runs, found by its registered name:
// that name must be the one the command answers to.
func TestRegisteredNames(t *testing.T) {
	seen := map[string]bool{}
	for _, b := range commandBuilders {
		if got := b.build(&cmdutil.Env{}, b.name).Name(); got != b.name {
			t.Errorf("registered as %q, but the command is named %q", b.name, got)
		}
		if seen[b.name] {
			t.Errorf("%q registered twice", b.name)
		}
		seen[b.name] = true
	}
	root := newRoot(&cmdutil.Env{}, "perfquery")
	if cmds := root.Commands(); len(cmds) != 1 || cmds[0].Name() != "perfquery" {
		t.Errorf("a perfquery run builds %d commands, want perfquery alone", len(cmds))
	}
	if n := len(newRoot(&cmdutil.Env{}, "nosuch").Commands()); n != len(commandBuilders)+2 {
		t.Errorf("an unknown name builds %d commands, want all %d", n, len(commandBuilders)+2)
	}
}

// Help for a command that does not exist is a usage error naming it, not
// the general help with exit 0 (a script probing "ibtool X --help" would
// think X exists); help for one that exists still works.
func TestHelpForUnknownCommand(t *testing.T) {
	for _, args := range [][]string{{"nosuch", "--help"}, {"nosuch", "-h"}, {"help", "nosuch"}} {
		r := runWith(nil, append([]string{"ibtool"}, args...)...)
		if r.code != cmdutil.ExitUsage || r.stdout != "" || !strings.Contains(r.stderr, `unknown command "nosuch"`) {
			t.Errorf("ibtool %v: exit %d, stdout %q, stderr %q", args, r.code, r.stdout, r.stderr)
		}
	}
	for _, args := range [][]string{{"help", "perfquery"}, {"perfquery", "--help"}, {"help"}, {"--help"}} {
		r := runWith(nil, append([]string{"ibtool"}, args...)...)
		if r.code != cmdutil.ExitOK || r.stderr != "" || !strings.Contains(r.stdout, "Usage:") {
			t.Errorf("ibtool %v: exit %d, stdout %q, stderr %q", args, r.code, r.stdout, r.stderr)
		}
	}
	r := runWith(nil, "ibtool", "__complete", "help", "perf")
	if r.code != cmdutil.ExitOK || !strings.HasPrefix(r.stdout, "perfquery\n") {
		t.Errorf("completing help's argument: exit %d, stdout %q", r.code, r.stdout)
	}
}

// Run through a link whose name is no tool's, ibtool says which names it
// knows and exits 2 instead of running as plain ibtool.
func TestUnknownLinkName(t *testing.T) {
	for _, argv0 := range []string{"ibnosuchtool", "/usr/local/bin/install-links", "./perfquery.old"} {
		r := runWith(nil, argv0, "-h")
		if r.code != cmdutil.ExitUsage || r.stdout != "" || !strings.Contains(r.stderr, "not a tool ibtool knows") ||
			!strings.Contains(r.stderr, " perfquery ") || !strings.Contains(r.stderr, filepath.Base(argv0)) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q", argv0, r.code, r.stdout, r.stderr)
		}
	}
	// ibtool under its own name, also renamed with a suffix, is ibtool.
	for _, argv0 := range []string{"ibtool", "/opt/bin/ibtool", "ibtool-0.1"} {
		if r := runWith(nil, argv0, "help"); r.code != cmdutil.ExitOK || !strings.Contains(r.stdout, "Available Commands") {
			t.Errorf("%s help: exit %d, stdout %q, stderr %q", argv0, r.code, r.stdout, r.stderr)
		}
	}
}

// install-links makes every link it can, skips what is in the way (and
// says so, one line per link) and replaces it with --force.
func TestInstallLinks(t *testing.T) {
	dir := t.TempDir()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if self, err = filepath.EvalSymlinks(self); err != nil {
		t.Fatal(err)
	}
	names := linkNames(newRoot(&cmdutil.Env{}, ""))
	// The C tool is installed as perfquery; smpdump already links to us.
	cTool := filepath.Join(dir, "perfquery")
	if err := os.WriteFile(cTool, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(self, filepath.Join(dir, "smpdump")); err != nil {
		t.Fatal(err)
	}

	r := runWith(nil, "ibtool", "install-links", dir)
	if r.code != cmdutil.ExitOK || r.stderr != "" {
		t.Fatalf("install-links: exit %d, stderr %q", r.code, r.stderr)
	}
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	if len(lines) != len(names) {
		t.Errorf("want one line per link (%d), got:\n%s", len(names), r.stdout)
	}
	for _, want := range []string{
		"skipped " + cTool + ": already exists (--force replaces it)\n",
		"skipped " + filepath.Join(dir, "smpdump") + ": already links to " + self + "\n",
		"created " + filepath.Join(dir, "sminfo") + " -> " + self + "\n",
		"created " + filepath.Join(dir, "saquery") + " -> " + self + "\n",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, r.stdout)
		}
	}
	for _, name := range names {
		target, err := os.Readlink(filepath.Join(dir, name))
		if name == "perfquery" {
			if err == nil {
				t.Errorf("perfquery was replaced without --force")
			}
			continue
		}
		if err != nil || target != self {
			t.Errorf("%s -> %q, %v; want %s", name, target, err, self)
		}
	}

	r = runWith(nil, "ibtool", "install-links", "--force", dir)
	if r.code != cmdutil.ExitOK || !strings.Contains(r.stdout, "replaced "+cTool+" -> "+self+"\n") ||
		strings.Contains(r.stdout, "created ") {
		t.Fatalf("install-links --force: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	if target, err := os.Readlink(cTool); err != nil || target != self {
		t.Errorf("perfquery -> %q, %v after --force", target, err)
	}
}

// A link that cannot be made is reported; the others are still made and
// the command fails.
func TestInstallLinksGoesOnAfterAFailure(t *testing.T) {
	dir := t.TempDir()
	// A non-empty directory named like a tool cannot be replaced.
	if err := os.MkdirAll(filepath.Join(dir, "ibstat", "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	r := runWith(nil, "ibtool", "install-links", "--force", dir)
	if r.code != cmdutil.ExitFailure || !strings.Contains(r.stderr, "cannot replace "+filepath.Join(dir, "ibstat")) ||
		!strings.Contains(r.stderr, "1 of ") {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	if _, err := os.Readlink(filepath.Join(dir, "sminfo")); err != nil {
		t.Errorf("sminfo: %v", err)
	}
}

// A huge argument is not echoed whole, once per layer of context: each
// occurrence is shortened to its ends and its length.
func TestLongArgumentsAreShortenedInMessages(t *testing.T) {
	f := sharedFabric(t, "tiny.net")
	long := strings.Repeat("1", 100000)
	short := "111111111111111111111111...11111111 (100000 characters)"
	for _, args := range [][]string{
		{"smpquery", "nodeinfo", long}, {"perfquery", long}, {"ibaddr", long}, {"sminfo", long},
		{"ibportstate", long, "1"}, {"smpdump", long, "0x11"}, {"iblinkinfo", "-D", long}, {"subnet_diff", long},
	} {
		r := runSim(f, "", args...)
		if r.Code == 0 || len(r.Stderr) > 2000 || !strings.Contains(r.Stderr, short) {
			t.Errorf("%s: exit %d, %d bytes of stderr: %.200q", args[0], r.Code, len(r.Stderr), r.Stderr)
		}
	}
	if got := shortenArgs("bad \"é"+strings.Repeat("é", 70)+"x\"", []string{"é" + strings.Repeat("é", 70) + "x"}); got != "bad \""+strings.Repeat("é", 24)+"...éééééééx (72 characters)\"" {
		t.Errorf("runes: %q", got)
	}
	if got := shortenArgs("bad "+strings.Repeat("é", 40), []string{strings.Repeat("é", 40)}); got != "bad "+strings.Repeat("é", 40) {
		t.Errorf("long in bytes only: %q", got)
	}
}

// Only a registered name makes run take the CPUs away before building the
// command: "ibtool -v exporter" must leave the exporter its CPUs.
func TestRegistered(t *testing.T) {
	for name, want := range map[string]bool{"ibqueryerrors": true, "perfquery": true, "exporter": true, "-v": false, "": false, "nosuch": false} {
		if got := registered(name); got != want {
			t.Errorf("registered(%q) = %v, want %v", name, got, want)
		}
	}
}

// Only a command line that asks for help alone skips giving a CPU back;
// "-h" after "--" is an argument, not a request.
func TestHelpAsked(t *testing.T) {
	for _, tc := range []struct {
		argv []string
		want bool
	}{
		{[]string{"perfquery", "--help"}, true},
		{[]string{"perfquery", "-h"}, true},
		{[]string{"perfquery", "-x", "7", "-h"}, true},
		{[]string{"perfquery", "7", "1"}, false},
		{[]string{"ibnetdiscover", "--", "-h"}, false},
		{nil, false},
	} {
		if got := helpAsked(tc.argv); got != tc.want {
			t.Errorf("helpAsked(%q) = %v, want %v", tc.argv, got, tc.want)
		}
	}
}
