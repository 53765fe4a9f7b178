package cache

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"

	"github.com/ibtool/ibtool/internal/atomicfile"
	"github.com/ibtool/ibtool/internal/discovery"
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

	perm := filePerm &^ atomicfile.Umask()
	mainFile, err := atomicfile.Create(path, perm)
	if err != nil {
		return fmt.Errorf("cache: writing %s: %w", path, err)
	}
	defer mainFile.Abort()
	if _, err := mainFile.Write(main.Bytes()); err != nil {
		return fmt.Errorf("cache: writing %s: %w", path, err)
	}
	var extraFile *atomicfile.File
	if extra != nil {
		if extraFile, err = atomicfile.Create(path+CompanionSuffix, perm); err != nil {
			return fmt.Errorf("cache: writing %s: %w", path+CompanionSuffix, err)
		}
		defer extraFile.Abort()
		if _, err := extraFile.Write(extra); err != nil {
			return fmt.Errorf("cache: writing %s: %w", path+CompanionSuffix, err)
		}
	}
	// Main file first: a crash before the companion is renamed leaves an
	// old companion whose checksum no longer matches, which Read ignores.
	if err := mainFile.Commit(); err != nil {
		return fmt.Errorf("cache: %w", err)
	}
	if extraFile != nil {
		if err := extraFile.Commit(); err != nil {
			return fmt.Errorf("cache: %s written, but not its companion: %w", path, err)
		}
	} else if err := os.Remove(path + CompanionSuffix); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("cache: %s written, but its stale companion stays: %w", path, err)
	}
	atomicfile.SyncDir(filepath.Dir(path))
	return nil
}
