// Package atomicfile writes files so that a reader sees the old file or
// the new one, never part of one: the data goes to a temporary file in
// the same directory, which is synced and renamed over the file. On an
// error, or when the process ends meanwhile (a signal included: see
// internal/exitclean), the temporary file is removed and the old file is
// left as it was.
package atomicfile

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/ibtool/ibtool/internal/exitclean"
)

// File is a file being written; Commit makes it the file at its path,
// Abort drops it.
type File struct {
	*os.File
	path   string
	perm   fs.FileMode
	forget func() // stops exitclean removing the temporary file
	done   bool
}

// Create starts a file that Commit will put at path with permissions
// perm (exactly: the umask does not apply; see Umask).
func Create(path string, perm fs.FileMode) (*File, error) {
	hold := exitclean.Hold() // no exit between creating and registering it
	defer hold()
	t, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return nil, err
	}
	name := t.Name()
	return &File{File: t, path: path, perm: perm, forget: exitclean.Add(func() { os.Remove(name) })}, nil
}

// Commit syncs the data and renames the temporary file over the path.
// On an error the temporary file is removed.
func (f *File) Commit() error {
	if f.done {
		return os.ErrClosed
	}
	err := f.Chmod(f.perm)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), f.path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	f.finish()
	return err
}

// Abort removes the temporary file, unless Commit already ended it; it
// may be deferred.
func (f *File) Abort() {
	if f.done {
		return
	}
	f.Close()
	os.Remove(f.Name())
	f.finish()
}

func (f *File) finish() {
	f.done = true
	f.forget()
}

// WriteFile writes data to path atomically with permissions perm.
func WriteFile(path string, data []byte, perm fs.FileMode) error {
	f, err := Create(path, perm)
	if err != nil {
		return err
	}
	defer f.Abort()
	if _, err := f.Write(data); err != nil {
		return err
	}
	return f.Commit()
}

// SyncDir makes renames in dir durable; file systems that cannot sync a
// directory are ignored (the data itself was synced).
func SyncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

// Umask is the process's umask, read without changing it (Linux 4.7+),
// 022 when it cannot be read: for a file created as open(2) would, with
// perm &^ Umask().
func Umask() fs.FileMode {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0o022
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), "Umask:"); ok {
			if m, err := strconv.ParseUint(strings.TrimSpace(v), 8, 32); err == nil {
				return fs.FileMode(m) & fs.ModePerm
			}
		}
	}
	return 0o022
}
