package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// Every tool command answers "ibtool <cmd> --help" (and -h) with its help
// on stdout, exit 0, and lists --json.
func TestEveryCommandHelp(t *testing.T) {
	if len(commandBuilders) < 20 {
		t.Fatalf("only %d commands registered", len(commandBuilders))
	}
	for _, build := range commandBuilders {
		name := build(&Env{}).Name()
		for _, flag := range []string{"--help", "-h"} {
			r := runWith(nil, "ibtool", name, flag)
			if r.code != ExitOK || r.stderr != "" || !strings.Contains(r.stdout, "Usage:") {
				t.Errorf("ibtool %s %s: exit %d, stderr %q, stdout %q", name, flag, r.code, r.stderr, r.stdout)
				continue
			}
			if !strings.Contains(r.stdout, "--json") {
				t.Errorf("ibtool %s %s does not list --json:\n%s", name, flag, r.stdout)
			}
		}
	}
}

// Run through a link whose name is no tool's, ibtool says which names it
// knows and exits 2 instead of running as plain ibtool.
func TestUnknownLinkName(t *testing.T) {
	for _, argv0 := range []string{"ibnosuchtool", "/usr/local/bin/install-links", "./perfquery.old"} {
		r := runWith(nil, argv0, "-h")
		if r.code != ExitUsage || r.stdout != "" || !strings.Contains(r.stderr, "not a tool ibtool knows") ||
			!strings.Contains(r.stderr, " perfquery ") || !strings.Contains(r.stderr, filepath.Base(argv0)) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q", argv0, r.code, r.stdout, r.stderr)
		}
	}
	// ibtool under its own name, also renamed with a suffix, is ibtool.
	for _, argv0 := range []string{"ibtool", "/opt/bin/ibtool", "ibtool-0.1"} {
		if r := runWith(nil, argv0, "help"); r.code != ExitOK || !strings.Contains(r.stdout, "Available Commands") {
			t.Errorf("%s help: exit %d, stdout %q, stderr %q", argv0, r.code, r.stdout, r.stderr)
		}
	}
}
