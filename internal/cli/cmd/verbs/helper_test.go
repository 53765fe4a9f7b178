package verbs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The helper is found beside the binary first, then where make install
// puts it; missing, the error names both places and how to install it.
func TestHelperPath(t *testing.T) {
	root := t.TempDir()
	bin, lib := filepath.Join(root, "bin"), filepath.Join(root, "lib", "ibtool")
	for _, d := range []string{bin, lib} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	exe := filepath.Join(bin, "ibtool")
	_, err := helperPath(exe)
	if err == nil || !strings.Contains(err.Error(), filepath.Join(bin, HelperName)) ||
		!strings.Contains(err.Error(), filepath.Join(lib, HelperName)) || !strings.Contains(err.Error(), "go install") {
		t.Fatalf("no helper: err = %v", err)
	}
	// Not executable: not a helper.
	installed := filepath.Join(lib, HelperName)
	if err := os.WriteFile(installed, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if p, err := helperPath(exe); err == nil {
		t.Fatalf("a file that cannot run was taken: %s", p)
	}
	if err := os.Chmod(installed, 0o755); err != nil {
		t.Fatal(err)
	}
	if p, err := helperPath(exe); err != nil || p != filepath.Join(bin, "..", "lib", "ibtool", HelperName) {
		t.Fatalf("installed helper: %q, %v", p, err)
	}
	beside := filepath.Join(bin, HelperName)
	if err := os.WriteFile(beside, nil, 0o755); err != nil {
		t.Fatal(err)
	}
	if p, err := helperPath(exe); err != nil || p != beside {
		t.Fatalf("helper beside ibtool: %q, %v; want %q", p, err, beside)
	}
}
