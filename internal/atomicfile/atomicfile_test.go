package atomicfile

import (
	"os"
	"path/filepath"
	"testing"
)

// entries lists dir, hidden temporary files included.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

func TestWriteFileReplacesWhole(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(path, []byte("new"), 0o640); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	st, _ := os.Stat(path)
	if string(got) != "new" || st.Mode().Perm() != 0o640 {
		t.Errorf("got %q mode %v, want \"new\" 0640", got, st.Mode().Perm())
	}
	if names := entries(t, dir); len(names) != 1 {
		t.Errorf("left beside it: %v", names)
	}
}

// An aborted file leaves the old one as it was, and nothing else.
func TestAbortKeepsTheOldFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	os.WriteFile(path, []byte("old"), 0o644)
	f, err := Create(path, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("half a"))
	f.Abort()
	f.Abort() // a deferred Abort after an explicit one
	if got, _ := os.ReadFile(path); string(got) != "old" {
		t.Errorf("after Abort the file holds %q", got)
	}
	if names := entries(t, dir); len(names) != 1 {
		t.Errorf("left beside it: %v", names)
	}
	if err := f.Commit(); err == nil {
		t.Error("Commit after Abort succeeded")
	}
}

// A commit that cannot rename (the path is a directory) fails and
// removes its temporary file; a deferred Abort after Commit does nothing.
func TestFailedCommitLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "d")
	if err := os.Mkdir(path, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(path, "x"), nil, 0o644) // a rename over a non-empty directory fails
	f, err := Create(path, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("data"))
	if err := f.Commit(); err == nil {
		t.Fatal("a rename over a directory succeeded")
	}
	f.Abort()
	if names := entries(t, dir); len(names) != 1 || names[0] != "d" {
		t.Errorf("left: %v", names)
	}
}

func TestCreateInAMissingDirectory(t *testing.T) {
	if _, err := Create(filepath.Join(t.TempDir(), "no", "f"), 0o644); err == nil {
		t.Error("created a file in a directory that does not exist")
	}
}

func TestUmask(t *testing.T) {
	if m := Umask(); m&^0o777 != 0 {
		t.Errorf("umask %o has bits beyond the permissions", m)
	}
}
