package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ibtool/ibtool/internal/simfabric"
)

// buildIbtool builds the binary once per test into a temp dir.
func buildIbtool(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "ibtool")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func runBin(t *testing.T, bin string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	cmd.Env = append(os.Environ(), "IBTOOL_TRANSPORT=ibsim", "IBSIM_SOCKNAME=ibtool-test-nosim")
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errOut.String(), code
}

func TestTopLevelCommandLine(t *testing.T) {
	bin := buildIbtool(t)
	for _, tc := range []struct {
		args       []string
		code       int
		out, inErr string
	}{
		{[]string{"--version"}, 0, "ibtool version", ""},
		{[]string{"help"}, 0, "smpdump", ""},
		{[]string{}, 0, "Available Commands", ""},
		{[]string{"nosuchcommand"}, 2, "", "unknown command"},
		{[]string{"--nosuchflag"}, 2, "", "unknown flag"},
		{[]string{"smpdump", "--nosuchflag"}, 2, "", "unknown flag: --nosuchflag"},
		{[]string{"smpdump", "-V"}, 0, "", "smpdump BUILD VERSION:"},
		{[]string{"smpdump", "-h"}, 0, "Usage:", ""},
	} {
		out, errOut, code := runBin(t, bin, tc.args...)
		if code != tc.code || !strings.Contains(out, tc.out) || !strings.Contains(errOut, tc.inErr) {
			t.Errorf("ibtool %v: exit %d, stdout %q, stderr %q; want exit %d, %q, %q",
				tc.args, code, out, errOut, tc.code, tc.out, tc.inErr)
		}
	}
}

func TestInstallLinksAndArgv0Dispatch(t *testing.T) {
	bin := buildIbtool(t)
	dir := t.TempDir()
	if out, errOut, code := runBin(t, bin, "install-links", dir); code != 0 {
		t.Fatalf("install-links: exit %d: %s%s", code, out, errOut)
	}
	link := filepath.Join(dir, "smpdump")
	if target, err := os.Readlink(link); err != nil || target != bin {
		t.Fatalf("smpdump link = %q, %v; want %q", target, err, bin)
	}
	if _, err := os.Lstat(filepath.Join(dir, "install-links")); err == nil {
		t.Fatalf("install-links must not get a link of its own")
	}
	// Again: existing correct links are kept.
	if _, errOut, code := runBin(t, bin, "install-links", dir); code != 0 {
		t.Fatalf("second install-links: exit %d: %s", code, errOut)
	}
	// Through the link, -h is the C tools' usage: stderr, exit 2.
	out, errOut, code := runBin(t, link, "-h")
	if code != 2 || out != "" || !strings.Contains(errOut, "smpdump") {
		t.Fatalf("smpdump -h via symlink: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	// Through the link, the command runs with the C tool's name in messages.
	_, errOut, code = runBin(t, link, "-t", "0", "2", "0x11")
	if code != 255 || !strings.HasPrefix(errOut, "smpdump: iberror: failed: Invalid timeout") {
		t.Fatalf("smpdump via symlink: exit %d, stderr %q", code, errOut)
	}
}

// TestSymlinkMatchesCTool runs the real binary through its smpdump symlink
// on a simulated fabric, configured only by ibsim's environment variables.
func TestSymlinkMatchesCTool(t *testing.T) {
	f := simfabric.StartT(t, "tiny.net")
	simfabric.RequireTools(t, "smpdump")
	bin := buildIbtool(t)
	link := filepath.Join(t.TempDir(), "smpdump")
	if err := os.Symlink(bin, link); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"2", "0x11"}, {"-D", "0,8,1", "0x15", "1"}, {"2", "0x12"}} {
		ctx := context.Background()
		simfabric.Compare(t, "smpdump "+strings.Join(args, " "),
			f.RunC(ctx, "", "smpdump", args...), f.Run(ctx, "", link, args...), simfabric.DropSimNoise)
	}
}

// TestIbpingStopsCleanlyOnSIGINT checks that Ctrl-C ends ibping the way the
// C tool does (statistics, exit 0) even though the simulator transport
// otherwise closes its ports and exits 130 on SIGINT.
func TestIbpingStopsCleanlyOnSIGINT(t *testing.T) {
	f := simfabric.StartT(t, "tiny.net")
	bin := buildIbtool(t)
	server := exec.Command(bin, "ibping", "-S")
	server.Env = append(f.Env("Hca2"), "SIM_SET_ISSM=1")
	if err := server.Start(); err != nil {
		t.Fatal(err)
	}
	client := exec.Command(bin, "ibping", "3") // Hca2's LID in tiny.net
	client.Env = f.Env("Hca1")
	var out strings.Builder
	client.Stdout = &out
	if err := client.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond)
	client.Process.Signal(os.Interrupt)
	err := client.Wait()
	if err != nil || !strings.Contains(out.String(), "--- ") || !strings.Contains(out.String(), "Pong from") {
		t.Errorf("client after SIGINT: %v, output:\n%s", err, out.String())
	}
	server.Process.Signal(os.Interrupt)
	if err := server.Wait(); err != nil {
		t.Errorf("server after SIGINT: %v", err)
	}
}

// ibtool links no Prometheus library, nor what client_golang brings
// (protobuf, procfs): the exporter is ibtool-exporter, a program of its
// own, and every other command would pay for them at start-up. Of the
// exporter, only its command line (which imports none of them) is in
// ibtool, for the exporter command's help.
func TestNoExporterDependencies(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if pkg == "github.com/ibtool/ibtool/internal/exporter/cmdline" {
			continue
		}
		for _, banned := range []string{"github.com/prometheus/", "google.golang.org/protobuf", "github.com/ibtool/ibtool/internal/exporter"} {
			if strings.HasPrefix(pkg, banned) {
				t.Errorf("ibtool depends on %s", pkg)
			}
		}
	}
}
