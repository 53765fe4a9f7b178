package diagnose

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ibtool/ibtool/internal/counters"
)

// The health checks' part of a snapshot on disk (store.go): the counter
// reads in CounterDataFile (counterstore.go), the hidden nodes in
// snapshot.json, the thresholds in ThresholdFile.

// saveHealth puts the counters, the hidden nodes and the thresholds into
// doc and dir.
func saveHealth(dir string, doc *snapshotDoc, s *Snapshot, cfg *Config) error {
	var err error
	if doc.Counters, err = saveCounters(dir, s.Counters); err != nil {
		return err
	}
	doc.HiddenNodes = hiddenDocs(s.Hidden)
	th := cfg.Thresholds
	if th == nil {
		th = counters.Defaults(counters.Diagnose)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "# The thresholds ibtool diagnose judged the counters by (%s).\n", thresholdSource(th))
	for _, l := range th.InEffect() {
		fmt.Fprintf(&b, "%s=%d\n", l.Counter, l.Limit)
	}
	doc.Config.ThresholdFile = ThresholdFile
	return writeFile(filepath.Join(dir, ThresholdFile), b.Bytes())
}

// thresholdSource says where limits came from.
func thresholdSource(th *counters.Thresholds) string {
	if th.File == "" {
		return "its defaults"
	}
	return "read from " + th.File + ", the defaults for the counters it does not name"
}

// loadHealth reads back what saveHealth saved.
func loadHealth(dir string, doc *snapshotDoc, s *Snapshot, cfg *Config) error {
	var err error
	if s.Counters, err = loadCounters(dir, s.Fabric, doc.Counters); err != nil {
		return err
	}
	if s.Hidden, err = hiddenReads(s.Fabric, doc.HiddenNodes); err != nil {
		return fmt.Errorf("%s: %w", SnapshotFile, err)
	}
	if name := doc.Config.ThresholdFile; name != "" {
		if filepath.Base(name) != name {
			return fmt.Errorf("%s: threshold_file %q is not a file of the directory", SnapshotFile, name)
		}
		path := filepath.Join(dir, name)
		if _, err := os.Stat(path); err != nil {
			return err
		}
		if cfg.Thresholds, err = counters.ReadThresholds(path, counters.Diagnose); err != nil {
			return err
		}
	}
	return nil
}
