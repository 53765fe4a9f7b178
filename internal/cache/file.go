package cache

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/exitclean"
)

// Read loads the cache at path, and its companion file when there is one
// that belongs to it (DR paths, attributes that were not read, walk
// errors). Without a companion, DR paths are empty.
func Read(path string) (*discovery.Fabric, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cache: %w", err)
	}
	f, err := decodeNoGC(data, path)
	if err != nil {
		return nil, err
	}
	extra, err := os.ReadFile(path + CompanionSuffix)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return f, nil
	case err != nil:
		return nil, fmt.Errorf("cache companion: %w", err)
	}
	if _, err := applyCompanion(f, data, extra, path+CompanionSuffix); err != nil {
		return nil, err
	}
	return f, nil
}

// decodeNoGC is decode with the collector paused: nearly everything
// decode allocates is the fabric it returns, so a collection meanwhile
// would only mark it, two or three times as the heap grows from nothing
// (GOMEMLIMIT, if set, still applies).
func decodeNoGC(data []byte, path string) (*discovery.Fabric, error) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	return decode(data, path)
}

// Write stores f at path in libibnetdisc's format, with a companion file
// "<path>.ibtool" when f has DR paths, unread attributes or walk errors
// (and no companion otherwise: a stale one is removed).
//
// The write is atomic: the data goes to temporary files in the same
// directory, which are synced and then renamed over the old files, so a
// reader sees the old cache or the new one, never part of one. On an
// error the temporary files are removed and the old cache is left as it
// was. The file is created 0644 minus the umask, as libibnetdisc does.
func Write(path string, f *discovery.Fabric) error {
	return WriteWith(path, f, WriteOptions{})
}

// WriteWith is Write with options.
func WriteWith(path string, f *discovery.Fabric, opts WriteOptions) error {
	var main bytes.Buffer
	if err := EncodeWith(&main, f, opts); err != nil {
		return err
	}
	var extra []byte
	if c := makeCompanion(f, main.Bytes()); c != nil {
		extra = c.marshal()
	}

	dir := filepath.Dir(path)
	mainTmp, forgetMain, err := writeTemp(dir, main.Bytes())
	defer forgetMain()
	if err != nil {
		return fmt.Errorf("cache: writing %s: %w", path, err)
	}
	extraTmp := ""
	if extra != nil {
		var forgetExtra func()
		extraTmp, forgetExtra, err = writeTemp(dir, extra)
		defer forgetExtra()
		if err != nil {
			os.Remove(mainTmp)
			return fmt.Errorf("cache: writing %s: %w", path+CompanionSuffix, err)
		}
	}
	// Main file first: a crash before the companion is renamed leaves an
	// old companion whose checksum no longer matches, which Read ignores.
	if err := os.Rename(mainTmp, path); err != nil {
		os.Remove(mainTmp)
		if extraTmp != "" {
			os.Remove(extraTmp)
		}
		return fmt.Errorf("cache: %w", err)
	}
	if extraTmp != "" {
		if err := os.Rename(extraTmp, path+CompanionSuffix); err != nil {
			os.Remove(extraTmp)
			return fmt.Errorf("cache: %s written, but not its companion: %w", path, err)
		}
	} else if err := os.Remove(path + CompanionSuffix); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("cache: %s written, but its stale companion stays: %w", path, err)
	}
	syncDir(dir)
	return nil
}

// writeTemp writes data to a new temporary file in dir, synced to disk and
// with the cache's permissions; it returns the file's name, and a func to
// call once the file is renamed or removed. Until then any exit of the
// process (a signal included: see exitclean) removes the file.
func writeTemp(dir string, data []byte) (string, func(), error) {
	hold := exitclean.Hold()
	t, err := os.CreateTemp(dir, tempPattern)
	if err != nil {
		hold()
		return "", func() {}, err
	}
	name := t.Name()
	forget := exitclean.Add(func() { os.Remove(name) })
	hold()
	fail := func(err error) (string, func(), error) {
		t.Close()
		os.Remove(name)
		return "", forget, err
	}
	if err := t.Chmod(filePerm &^ umask()); err != nil {
		return fail(err)
	}
	if _, err := t.Write(data); err != nil {
		return fail(err)
	}
	if err := t.Sync(); err != nil {
		return fail(err)
	}
	if err := t.Close(); err != nil {
		os.Remove(name)
		return "", forget, err
	}
	return name, forget, nil
}

// syncDir makes the renames durable; file systems that cannot sync a
// directory are ignored (the data itself was synced).
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

// umask reads the process's umask without changing it (Linux 4.7+), and
// assumes 022 when it cannot.
func umask() fs.FileMode {
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
