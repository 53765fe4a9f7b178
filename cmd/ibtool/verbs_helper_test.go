package main

import (
	"debug/elf"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// ibtool is statically linked: no dynamic loader runs before it starts
// (the verbs commands, which need one to reach libibverbs, run in
// ibtool-verbs); ibtool-verbs is dynamically linked, as it must be.
func TestIbtoolIsStaticHelperIsNot(t *testing.T) {
	dir := t.TempDir()
	bin := buildInto(t, dir, ".")
	helper := buildInto(t, dir, "../ibtool-verbs")
	if interp := interpreter(t, bin); interp != "" {
		t.Errorf("ibtool asks for the dynamic loader %s", interp)
	}
	if interp := interpreter(t, helper); interp == "" {
		t.Errorf("ibtool-verbs is statically linked: it cannot dlopen libibverbs")
	}
}

// ibtool runs a verbs command in ibtool-verbs once its flags are checked:
// the library's absence is then reported by the helper, as from ibtool
// before; a usage error never needs the helper; a missing helper is one
// clear line.
func TestVerbsCommandsRunInHelper(t *testing.T) {
	dir := t.TempDir()
	bin := buildInto(t, dir, ".")
	noLib := "IBTOOL_LIBIBVERBS=/nonexistent/libibverbs.so.1"
	_, errOut, code := runEnv(t, bin, []string{noLib}, "ibv_devices")
	if code != 255 || !strings.Contains(errOut, "ibtool-verbs, which runs the verbs commands, is not installed") {
		t.Errorf("without the helper: exit %d, stderr %q", code, errOut)
	}
	if _, errOut, code := runEnv(t, bin, nil, "ibv_devinfo", "-i", "0"); code != 2 || !strings.Contains(errOut, "invalid port 0") {
		t.Errorf("usage error without the helper: exit %d, stderr %q", code, errOut)
	}
	buildInto(t, dir, "../ibtool-verbs")
	want := "ibv_devices: libibverbs is not available (/nonexistent/libibverbs.so.1: cannot open shared object file: No such file or directory); install rdma-core's libibverbs1 and ibverbs-providers\n"
	if out, errOut, code := runEnv(t, bin, []string{noLib}, "ibv_devices"); code != 255 || errOut != want || out != "" {
		t.Errorf("ibv_devices through the helper: exit %d, stdout %q, stderr %q; want %q", code, out, errOut, want)
	}
	// Through a link named like rdma-core's tool, the helper sees the
	// same name.
	link := filepath.Join(dir, "ibv_devinfo")
	if err := exec.Command("ln", "-s", bin, link).Run(); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := runEnv(t, link, []string{noLib}, "-l"); code != 255 ||
		!strings.HasPrefix(errOut, "ibv_devinfo: iberror: failed: libibverbs is not available (/nonexistent/") {
		t.Errorf("ibv_devinfo link through the helper: exit %d, stderr %q", code, errOut)
	}
}

// buildInto builds the command in pkg (relative to this one) into dir.
func buildInto(t *testing.T, dir, pkg string) string {
	t.Helper()
	name := "ibtool"
	if pkg != "." {
		name = filepath.Base(pkg)
	}
	bin := filepath.Join(dir, name)
	cmd := exec.Command("go", "build", "-o", bin, pkg)
	cmd.Env = append(cmd.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, out)
	}
	return bin
}

// interpreter is the dynamic loader an executable asks for, "" if none.
func interpreter(t *testing.T, bin string) string {
	t.Helper()
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			b := make([]byte, p.Filesz)
			if _, err := p.ReadAt(b, 0); err != nil {
				t.Fatal(err)
			}
			return strings.TrimRight(string(b), "\x00")
		}
	}
	return ""
}

// runEnv is runBin with more environment.
func runEnv(t *testing.T, bin string, env []string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	cmd.Env = append(cmd.Environ(), env...)
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errOut.String(), code
}
