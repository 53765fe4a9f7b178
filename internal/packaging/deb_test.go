// Package packaging tests what "make deb" builds: installed with dpkg beside
// Debian's infiniband-diags, the package runs on a simulated fabric and
// removes cleanly.
package packaging

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ibtool/ibtool/internal/simfabric"
)

// dpkgDB is where the test installs the package: the system's dpkg
// database (root "/") or a private one under a temp dir.
type dpkgDB struct {
	root string
}

func (d dpkgDB) real() bool { return d.root == "/" }

// dpkg runs dpkg on the database, retrying while another dpkg holds the lock.
func (d dpkgDB) dpkg(t *testing.T, args ...string) string {
	t.Helper()
	if !d.real() {
		args = append([]string{"--root=" + d.root, "--force-not-root", "--force-depends", "--log=/dev/null"}, args...)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		out, err := exec.Command("dpkg", args...).CombinedOutput()
		if err == nil {
			return string(out)
		}
		if strings.Contains(string(out), "lock") && time.Now().Before(deadline) {
			time.Sleep(2 * time.Second)
			continue
		}
		t.Fatalf("dpkg %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

func (d dpkgDB) path(p string) string { return filepath.Join(d.root, p) }

// chooseDB installs into the system when the test runs as root (as CI
// does) and no ibtool package is installed already; otherwise into a
// private root, which checks the package's contents but not that it
// coexists with the system's packages, so CI must not end up there.
func chooseDB(t *testing.T) dpkgDB {
	status, _ := exec.Command("dpkg-query", "-W", "-f=${Status} ${Version}", "ibtool").Output()
	installed := strings.Contains(string(status), "installed")
	if installed && strings.HasSuffix(string(status), " "+testVersion) && os.Getuid() == 0 {
		// Left by an earlier run of this test that was killed.
		dpkgDB{root: "/"}.dpkg(t, "-r", "ibtool")
		installed = false
	}
	if os.Getuid() == 0 && !installed {
		return dpkgDB{root: "/"}
	}
	why := "not root"
	if installed {
		why = "an ibtool package is already installed"
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s: CI must install the package into the system's dpkg database", why)
	}
	t.Logf("%s: installing into a private dpkg root instead of the system", why)
	root := t.TempDir()
	for _, dir := range []string{"var/lib/dpkg/info", "var/lib/dpkg/updates"} {
		if err := os.MkdirAll(filepath.Join(root, dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "var/lib/dpkg/status"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return dpkgDB{root: root}
}

// The package the tests build: its version, and the inputs that make deb
// otherwise takes from git (the builds to compare must agree on them).
const (
	testVersion = "0.0.0~test"
	testEpoch   = "1767225600" // 2026-01-01 00:00:00 UTC
)

// debArgs are make deb's arguments for the test package.
func debArgs() []string {
	return []string{"--no-print-directory", "deb", "DEB_VERSION=" + testVersion, "VERSION=" + testVersion,
		"SOURCE_DATE_EPOCH=" + testEpoch, "DEB_COMMIT=0123456789ab"}
}

// makeDeb runs make deb in the source tree dir and returns the package,
// moved into out.
func makeDeb(t *testing.T, dir, out string) string {
	t.Helper()
	cmd := exec.Command("make", debArgs()...)
	cmd.Dir = dir
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make deb in %s: %v\n%s", dir, err, b)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	deb := filepath.Join(dir, lines[len(lines)-1])
	if !strings.HasSuffix(deb, ".deb") {
		t.Fatalf("make deb did not name the package last:\n%s", b)
	}
	moved := filepath.Join(out, filepath.Base(deb))
	if err := os.Rename(deb, moved); err != nil {
		t.Fatal(err)
	}
	return moved
}

var repoDeb struct {
	once sync.Once
	path string
	err  string
}

// buildDeb is the package made in the repository, built once for the
// tests that need it.
func buildDeb(t *testing.T) string {
	t.Helper()
	repoDeb.once.Do(func() {
		repo, err := simfabric.ModuleRoot()
		if err != nil {
			repoDeb.err = err.Error()
			return
		}
		// A test that fails inside makeDeb fails this test; the others
		// then see the error.
		repoDeb.err = "make deb failed in an earlier test"
		repoDeb.path = makeDeb(t, repo, debDir)
		repoDeb.err = ""
	})
	if repoDeb.err != "" {
		t.Fatal(repoDeb.err)
	}
	return repoDeb.path
}

// debDir holds the packages the tests build, for the whole test binary.
var debDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "ibtool-deb-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	debDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func TestDebInstallsBesideInfinibandDiags(t *testing.T) {
	for _, tool := range []string{"make", "dpkg", "dpkg-deb", "dpkg-query"} {
		if _, err := exec.LookPath(tool); err != nil {
			simfabric.Missing(t, fmt.Errorf("%s is needed to build and install the package: %w", tool, err))
		}
	}
	simfabric.RequireTools(t, "smpquery")
	f := simfabric.StartT(t, "tiny.net")
	deb := buildDeb(t)
	db := chooseDB(t)

	// infiniband-diags' files, which the package must leave alone.
	var diagsFiles []string
	if db.real() {
		if out, err := exec.Command("dpkg", "-L", "infiniband-diags").Output(); err == nil {
			for _, p := range strings.Fields(string(out)) {
				if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() {
					diagsFiles = append(diagsFiles, p)
				}
			}
		}
	}
	before := map[string]time.Time{}
	for _, p := range diagsFiles {
		fi, _ := os.Lstat(p)
		before[p] = fi.ModTime()
	}

	removed := false
	t.Cleanup(func() {
		if !removed {
			db.dpkg(t, "-r", "ibtool")
		}
	})
	db.dpkg(t, "-i", deb)

	ibtool := db.path("/usr/bin/ibtool")
	out, err := exec.Command(ibtool, "--version").CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "ibtool version ") {
		t.Errorf("ibtool --version: %v, %q", err, out)
	}
	// The packaged binary is the header-free build, and its verbs commands
	// work: libibverbs is installed here (the Makefile's libibverbs-dev
	// brings it), with no RDMA device.
	if info, err := exec.Command("go", "version", "-m", ibtool).Output(); err != nil || !strings.Contains(string(info), "CGO_ENABLED=0") {
		t.Errorf("the packaged ibtool is not a CGO_ENABLED=0 build: %v\n%s", err, info)
	}
	out, err = exec.Command(ibtool, "ibv_devices").CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "    device          \t   node GUID\n") {
		t.Errorf("ibtool ibv_devices: %v, %q", err, out)
	}
	for _, name := range []string{"perfquery", "ibstat", "ibv_devinfo", "smpquery"} {
		if target, err := os.Readlink(db.path("/usr/lib/ibtool/bin/" + name)); err != nil || target != "../../../bin/ibtool" {
			t.Errorf("/usr/lib/ibtool/bin/%s -> %q, %v; want a relative link to /usr/bin/ibtool", name, target, err)
		}
	}
	for _, p := range []string{"/usr/share/man/man8/ibtool.8.gz", "/usr/share/man/man8/ibtool-perfquery.8.gz",
		"/usr/share/bash-completion/completions/ibtool", "/usr/share/zsh/vendor-completions/_ibtool",
		"/usr/share/fish/vendor_completions.d/ibtool.fish", "/usr/share/doc/ibtool/README.md"} {
		if _, err := os.Stat(db.path(p)); err != nil {
			t.Errorf("not installed: %v", err)
		}
	}
	for _, p := range strings.Fields(db.dpkg(t, "-L", "ibtool")) {
		if strings.HasPrefix(p, "/usr/sbin") || strings.HasPrefix(p, "/sbin") {
			t.Errorf("the package installs %s, where the C tools live", p)
		}
	}

	// One command on the simulated fabric, through the classic name when
	// the links resolve (a system install), byte for byte the C tool's.
	ctx := context.Background()
	bin := ibtool
	args := []string{"smpquery", "nodeinfo", "2"}
	if db.real() {
		bin, args = "/usr/lib/ibtool/bin/smpquery", args[1:]
	}
	c := f.RunC(ctx, "", "smpquery", "nodeinfo", "2")
	ours := f.Run(ctx, "", bin, args...)
	if c.Code != 0 || ours.Code != c.Code || ours.Stdout != c.Stdout {
		t.Errorf("installed %s %v differs from smpquery:\nC: %s\nibtool: %s", bin, args, c, ours)
	}

	for _, p := range diagsFiles {
		fi, err := os.Lstat(p)
		if err != nil || !fi.Mode().IsRegular() || !fi.ModTime().Equal(before[p]) {
			t.Errorf("infiniband-diags' %s changed by installing ibtool: %v", p, err)
		}
	}
	if db.real() && len(diagsFiles) == 0 {
		t.Error("infiniband-diags is not installed: the test cannot show the package installs beside it")
	}

	db.dpkg(t, "-r", "ibtool")
	removed = true
	for _, p := range []string{"/usr/bin/ibtool", "/usr/lib/ibtool", "/usr/share/man/man8/ibtool.8.gz", "/usr/share/doc/ibtool"} {
		if _, err := os.Lstat(db.path(p)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s is still there after dpkg -r: %v", p, err)
		}
	}
}
