package packaging

import (
	"bytes"
	"debug/buildinfo"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ibtool/ibtool/internal/simfabric"
)

// make deb is reproducible: built a second time from a copy of the source
// in another directory (other file times, a longer path, no git), the
// package is byte for byte the same.
func TestDebReproducible(t *testing.T) {
	requireDebTools(t)
	deb := buildDeb(t)
	copyDir := filepath.Join(t.TempDir(), "a", "longer", "source", "path")
	copySource(t, copyDir)
	again := makeDeb(t, copyDir, t.TempDir())
	a, err := os.ReadFile(deb)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(again)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Errorf("two builds of the package differ (%d and %d bytes)", len(a), len(b))
		for _, what := range [][]string{{"-I"}, {"-c"}} {
			x, y := dpkgDeb(t, append(what, deb)...), dpkgDeb(t, append(what, again)...)
			if x != y {
				t.Errorf("dpkg-deb %s differs:\n%s", what[0], simfabric.UnifiedDiff("first", "first", x, y))
			}
		}
		first, second := extract(t, deb), extract(t, again)
		filepath.WalkDir(first, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, _ := filepath.Rel(first, p)
			x, _ := os.ReadFile(p)
			y, _ := os.ReadFile(filepath.Join(second, rel))
			if !bytes.Equal(x, y) {
				t.Errorf("%s differs", rel)
			}
			return nil
		})
	}
}

// The package holds what make install installs (the binaries, units, man
// pages, completions and links), plus its documentation; its binaries
// are stripped position independent executables with RELRO, built
// without cgo; and lintian, where it is installed (CI: always), reports
// no error and no warning.
func TestDebContentsAndLintian(t *testing.T) {
	requireDebTools(t)
	deb := buildDeb(t)
	repo, err := simfabric.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	root := extract(t, deb)
	packaged := tree(t, root)

	installed := t.TempDir()
	install := exec.Command("make", "--no-print-directory", "install", "PREFIX=/usr", "DESTDIR="+installed,
		"ZSHCOMPDIR=/usr/share/zsh/vendor-completions")
	install.Dir = repo
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("make install: %v\n%s", err, out)
	}
	installedFiles := tree(t, installed)
	for p, kind := range installedFiles {
		if strings.HasPrefix(p, "usr/share/man/") && kind == "file" {
			p += ".gz"
		}
		if packaged[p] != kind {
			t.Errorf("make install installs %s (%s); the package has %q", p, kind, packaged[p])
		}
	}
	for p := range packaged {
		if !strings.HasPrefix(p, "usr/share/doc/ibtool/") && !strings.HasPrefix(p, "usr/share/man/") &&
			installedFiles[p] == "" {
			t.Errorf("the package has %s, which make install does not install", p)
		}
	}
	for _, p := range []string{"usr/bin/ibtool", "usr/share/man/man8/ibtool.8.gz", "usr/share/doc/ibtool/copyright",
		"usr/share/doc/ibtool/changelog.gz", "usr/share/bash-completion/completions/ibtool"} {
		if packaged[p] == "" {
			t.Errorf("the package has no %s", p)
		}
	}
	// The exporter daemon, where the source has it, ships with its unit.
	if _, err := os.Stat(filepath.Join(repo, "cmd", "ibtool-exporter")); err == nil {
		if packaged["usr/bin/ibtool-exporter"] == "" || !slices.ContainsFunc(keys(packaged), func(p string) bool {
			return strings.HasPrefix(p, "usr/lib/systemd/system/") && strings.HasSuffix(p, ".service")
		}) {
			t.Error("the source has cmd/ibtool-exporter, the package no usr/bin/ibtool-exporter and systemd unit")
		}
	}
	for p, kind := range packaged {
		if kind == "link" {
			target, _ := os.Readlink(filepath.Join(root, p))
			if filepath.IsAbs(target) {
				t.Errorf("%s -> %s: an absolute link", p, target)
			}
		}
		if strings.HasPrefix(p, "usr/bin/") && kind == "file" {
			checkReleaseBinary(t, filepath.Join(root, p))
		}
	}

	lintian, err := exec.LookPath("lintian")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("lintian is missing; make deps installs it and CI checks the package with it")
		}
		t.Skip("lintian is missing: the package is not checked with it")
	}
	// Tags of every level; errors and warnings fail the test.
	out, _ := exec.Command(lintian, "--info", "--display-level", ">=pedantic", deb).CombinedOutput()
	t.Logf("lintian %s:\n%s", filepath.Base(deb), out)
	for _, line := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(line, "E: ") || strings.HasPrefix(line, "W: ") {
			t.Errorf("lintian: %s", line)
		}
	}
}

// checkReleaseBinary checks what lintian's hardening and strip checks
// look at, also where lintian is not installed: a PIE that names libc, with
// a RELRO segment and immediate binding, no symbol table, and a cgo-free
// Go build.
func checkReleaseBinary(t *testing.T, path string) {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Errorf("%s: %v", path, err)
		return
	}
	defer f.Close()
	name := filepath.Base(path)
	if f.Type != elf.ET_DYN {
		t.Errorf("%s: ELF type %v, want a position independent executable", name, f.Type)
	}
	if !slices.ContainsFunc(f.Progs, func(p *elf.Prog) bool { return p.Type == elf.PT_GNU_RELRO }) {
		t.Errorf("%s: no GNU_RELRO segment", name)
	}
	if flags, err := f.DynValue(elf.DT_FLAGS_1); err != nil || len(flags) != 1 ||
		flags[0]&uint64(elf.DF_1_PIE) == 0 || flags[0]&uint64(elf.DF_1_NOW) == 0 {
		t.Errorf("%s: DT_FLAGS_1 %v (%v), want PIE and NOW", name, flags, err)
	}
	// A PIE that names no library is a broken shared library to lintian:
	// a binary without cgo imports internal/dynlibc.
	if libs, err := f.ImportedLibraries(); err != nil || !slices.Contains(libs, "libc.so.6") {
		t.Errorf("%s: needs %q (%v); want libc.so.6 (import internal/dynlibc)", name, libs, err)
	}
	if f.Section(".symtab") != nil || f.Section(".debug_info") != nil {
		t.Errorf("%s: not stripped", name)
	}
	info, err := buildinfo.ReadFile(path)
	if err != nil {
		t.Errorf("%s: %v", name, err)
		return
	}
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	if settings["CGO_ENABLED"] != "0" || settings["-buildmode"] != "pie" || settings["-trimpath"] != "true" {
		t.Errorf("%s: built with %v; want CGO_ENABLED=0, -buildmode=pie, -trimpath", name, settings)
	}
}

func requireDebTools(t *testing.T) {
	t.Helper()
	for _, tool := range []string{"make", "dpkg-deb", "git"} {
		if _, err := exec.LookPath(tool); err != nil {
			simfabric.Missing(t, err)
		}
	}
}

// copySource copies the repository's files (tracked, and new ones not
// ignored, as they are in the working tree) into dir.
func copySource(t *testing.T, dir string) {
	t.Helper()
	repo, err := simfabric.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	list := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	list.Dir = repo
	files, err := list.Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	for _, f := range strings.Split(strings.TrimRight(string(files), "\x00"), "\x00") {
		src := filepath.Join(repo, f)
		fi, err := os.Lstat(src)
		if err != nil {
			continue // deleted in the working tree
		}
		dst := filepath.Join(dir, f)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			target, _ := os.Readlink(src)
			err = os.Symlink(target, dst)
		} else {
			var b []byte
			if b, err = os.ReadFile(src); err == nil {
				err = os.WriteFile(dst, b, fi.Mode().Perm())
			}
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// extract unpacks the package's files and its control files (in DEBIAN).
func extract(t *testing.T, deb string) string {
	t.Helper()
	dir := t.TempDir()
	dpkgDeb(t, "-x", deb, dir)
	dpkgDeb(t, "-e", deb, filepath.Join(dir, "DEBIAN"))
	return dir
}

func dpkgDeb(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command("dpkg-deb", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("dpkg-deb %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// tree maps each file and link below dir (DEBIAN left out) to its kind.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case rel == "DEBIAN" && d.IsDir():
			return filepath.SkipDir
		case d.Type()&os.ModeSymlink != 0:
			out[rel] = "link"
		case d.Type().IsRegular():
			out[rel] = "file"
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
