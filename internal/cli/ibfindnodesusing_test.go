package cli

import (
	"context"
	"strings"
	"testing"
)

func TestIbfindnodesusingMatchesInfinibandDiags(t *testing.T) {
	f := sharedFabric(t, "fattree-50.net")
	freshScriptCache(t)
	for _, args := range []string{
		"0x7cfe900300300000 1",  // a leaf's host port: the remote is a CA
		"0x7cfe900300300000 12", // a leaf's up port: hosts both ways
		"0x7cfe900300300004 1",  // a spine's port
		"0x7CFE900300300004 3",  // upper case GUID
		"7cfe900300300000 14",   // no 0x
		"0x7cfe900300300000 x",  // not a number
		"leaf01 12",             // a name: the script never finds one
		"0x99 3",                // no such switch: exit 1
		"0x7cfe900300300000",    // too few arguments: usage, exit 2
	} {
		fails := args == "leaf01 12" || args == "0x99 3" || args == "0x7cfe900300300000"
		conformCompat(cFails(t, fails), f, "", "ibfindnodesusing", strings.Fields(args)...)
	}
}

// A port with no link: no remote, no hosts. (The C script's ibroute -G ""
// then writes to stderr or not, depending on what it reads next.)
func TestIbfindnodesusingNoLink(t *testing.T) {
	f := sharedFabric(t, "fattree-50.net")
	freshScriptCache(t)
	c := f.RunC(context.Background(), "", "ibfindnodesusing", "0x7cfe900300300000", "30")
	ours := runSim(f, "", "ibfindnodesusing", "0x7cfe900300300000", "30")
	if ours.Code != c.Code || ours.Stdout != c.Stdout {
		t.Fatalf("ibtool (exit %d):\n%s\nC (exit %d):\n%s", ours.Code, ours.Stdout, c.Code, c.Stdout)
	}
}

func TestIbfindnodesusingByName(t *testing.T) {
	f := sharedFabric(t, "fattree-50.net")
	byName := runSim(f, "", "ibfindnodesusing", "leaf01", "12")
	byGUID := runSim(f, "", "ibfindnodesusing", "0x7cfe900300300000", "12")
	if byName.Code != 0 || byName.Stdout != byGUID.Stdout || !strings.Contains(byName.Stdout, "HCA-1") {
		t.Fatalf("by name (exit %d):\n%s\nby GUID:\n%s", byName.Code, byName.Stdout+byName.Stderr, byGUID.Stdout)
	}
}
