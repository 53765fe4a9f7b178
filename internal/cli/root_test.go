package cli

import (
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
