package dynlibc

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
)

// A cgo-free PIE that imports the package names libc.so.6 and runs; one
// that does not names no library (what the package is there for). The
// programs are testdata/with and testdata/without.
func TestPIENamesLibc(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		libc bool
	}{{"with", true}, {"without", false}} {
		bin := filepath.Join(dir, tc.name+".bin")
		build := exec.Command("go", "build", "-trimpath", "-buildmode=pie", "-ldflags=-s -w", "-o", bin, "./testdata/"+tc.name)
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", tc.name, err, out)
		}
		f, err := elf.Open(bin)
		if err != nil {
			t.Fatal(err)
		}
		libs, err := f.ImportedLibraries()
		f.Close()
		if err != nil || slices.Contains(libs, "libc.so.6") != tc.libc {
			t.Errorf("%s the import: needed libraries %q (%v); want libc.so.6: %v", tc.name, libs, err, tc.libc)
		}
		if out, err := exec.Command(bin).CombinedOutput(); err != nil || string(out) != "ran\n" {
			t.Errorf("%s the import: %v, %q", tc.name, err, out)
		}
	}
}
