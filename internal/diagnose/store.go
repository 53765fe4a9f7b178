package diagnose

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ibtool/ibtool/internal/atomicfile"
	"github.com/ibtool/ibtool/internal/cache"
	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/query"
	"github.com/ibtool/ibtool/internal/rpc"
)

// A snapshot on disk (--output-dir, read back by --load) is a directory
// of these files; docs/diagnose.md documents them.
const (
	// FabricFile is the walk: libibnetdisc's cache format, which
	// ibnetdiscover --load-cache reads too, with ibtool's companion file
	// (FabricFile + cache.CompanionSuffix: directed routes, walk errors).
	FabricFile = "fabric.cache"
	// SnapshotFile is the rest of what the sweep read, and the checks'
	// configuration, in JSON.
	SnapshotFile = "snapshot.json"
	// ExpectedFile is a copy of --expect's file, its kind the suffix:
	// "expected.cache" or "expected.topology".
	ExpectedFile = "expected"
	// ThresholdFile is the counters check's limits as it judged by them,
	// every one, in ibqueryerrors' threshold file format.
	ThresholdFile = "error_thresholds"
)

const (
	snapshotFormat  = "ibtool-diagnose-snapshot"
	snapshotVersion = 2
)

// snapshotDoc is SnapshotFile.
type snapshotDoc struct {
	Format  string `json:"format"`
	Version int    `json:"version"`
	Source  string `json:"source"`
	Config  struct {
		ExpectWidth  string `json:"expect_width,omitempty"`
		ExpectSpeed  string `json:"expect_speed,omitempty"`
		ExpectedFile string `json:"expected_file,omitempty"`
		// The counters check's (health.go).
		ThresholdFile string `json:"threshold_file,omitempty"`
	} `json:"config"`
	MADs            madsDoc      `json:"mads"`
	MADLoss         []lossDoc    `json:"mad_loss"`
	SMInfo          []smInfoDoc  `json:"sm_info"`
	PKeyTables      []pkeyDoc    `json:"pkey_tables"`
	MlnxExtPortInfo []mlnxExtDoc `json:"mlnx_ext_port_info"`
	// The counters and ids checks' reads (health.go).
	Counters    *countersDoc `json:"counters,omitempty"`
	HiddenNodes []hiddenDoc  `json:"hidden_nodes"`
}

type madsDoc struct {
	Sent      uint64 `json:"sent"`
	Retried   uint64 `json:"retried"`
	Lost      uint64 `json:"lost"`
	Unmatched uint64 `json:"unmatched"`
}

type lossDoc struct {
	Dest     string `json:"dest"`
	Attempts int    `json:"attempts"`
	NoReply  int    `json:"no_reply"`
	Replies  int    `json:"replies"`
}

// portDoc names a port of the fabric.
type portDoc struct {
	NodeGUID mad.GUID `json:"node_guid"`
	Port     int      `json:"port"`
}

type smInfoDoc struct {
	portDoc
	SMGUID        mad.GUID `json:"sm_guid"`
	SMState       uint8    `json:"sm_state"`
	Priority      uint8    `json:"priority"`
	ActivityCount uint32   `json:"activity_count"`
	Error         string   `json:"error,omitempty"`
}

type pkeyDoc struct {
	portDoc
	PKeys []uint16 `json:"pkeys,omitempty"`
	Error string   `json:"error,omitempty"`
}

type mlnxExtDoc struct {
	portDoc
	Data string `json:"data"` // the attribute's bytes as read, in hex
}

// Save writes s and the checks' configuration (not the node-name-map:
// --load takes one of its own) to the directory dir, creating it.
func Save(dir string, s *Snapshot, cfg *Config) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := cache.Write(filepath.Join(dir, FabricFile), s.Fabric); err != nil {
		return err
	}
	doc := snapshotDoc{Format: snapshotFormat, Version: snapshotVersion, Source: s.Source,
		MADs:    madsDoc{s.MADs.Sent, s.MADs.Retried, s.MADs.Lost, s.MADs.Unmatched},
		MADLoss: []lossDoc{}, SMInfo: []smInfoDoc{}, PKeyTables: []pkeyDoc{}, MlnxExtPortInfo: []mlnxExtDoc{}}
	doc.Config.ExpectWidth, doc.Config.ExpectSpeed = cfg.ExpectWidth, cfg.ExpectSpeed
	if e := cfg.Expected; e != nil {
		doc.Config.ExpectedFile = ExpectedFile + "." + e.Kind
		if err := writeFile(filepath.Join(dir, doc.Config.ExpectedFile), e.Data); err != nil {
			return err
		}
	}
	for _, d := range s.Loss {
		doc.MADLoss = append(doc.MADLoss, lossDoc{d.Dest, d.Attempts, d.NoReply, d.Replies})
	}
	for _, r := range s.SMInfo {
		d := smInfoDoc{portDoc: docOf(r.Port), SMGUID: r.Info.GUID, SMState: uint8(r.Info.SMState), Priority: r.Info.Priority, ActivityCount: r.Info.ActCount}
		if r.Err != nil {
			d = smInfoDoc{portDoc: docOf(r.Port), Error: r.Err.Error()}
		}
		doc.SMInfo = append(doc.SMInfo, d)
	}
	for _, r := range s.PKeys {
		d := pkeyDoc{portDoc: docOf(r.Port), PKeys: r.PKeys}
		if r.Err != nil {
			d = pkeyDoc{portDoc: docOf(r.Port), Error: r.Err.Error()}
		}
		doc.PKeyTables = append(doc.PKeyTables, d)
	}
	for _, p := range sortedPorts(s.Fabric, func(p *discovery.Port) bool { return len(p.MlnxExtPortInfo) > 0 }) {
		doc.MlnxExtPortInfo = append(doc.MlnxExtPortInfo, mlnxExtDoc{docOf(p), hex.EncodeToString(p.MlnxExtPortInfo)})
	}
	if err := saveHealth(dir, &doc, s, cfg); err != nil {
		return err
	}
	if err := saveTables(dir, s); err != nil {
		return err
	}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	return writeFile(filepath.Join(dir, SnapshotFile), append(b, '\n'))
}

func docOf(p *discovery.Port) portDoc { return portDoc{mad.GUID(p.Node.GUID), p.Num} }

// writeFile writes one file of a saved sweep whole (see atomicfile),
// readable by all as a file the shell would create.
func writeFile(path string, data []byte) error {
	return atomicfile.WriteFile(path, data, 0o644&^atomicfile.Umask())
}

// Load reads a snapshot saved by Save, with the configuration it was
// judged by (Names nil).
func Load(dir string) (*Snapshot, *Config, error) {
	f, err := query.LoadCache(filepath.Join(dir, FabricFile))
	if err != nil {
		return nil, nil, err
	}
	data, err := os.ReadFile(filepath.Join(dir, SnapshotFile))
	if err != nil {
		return nil, nil, err
	}
	var doc snapshotDoc
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", SnapshotFile, err)
	}
	if doc.Format != snapshotFormat || doc.Version != snapshotVersion {
		return nil, nil, fmt.Errorf("%s: format %q version %d, want %q version %d", SnapshotFile, doc.Format, doc.Version, snapshotFormat, snapshotVersion)
	}
	s := &Snapshot{Source: doc.Source, Fabric: f,
		MADs: rpc.Stats{Sent: doc.MADs.Sent, Retried: doc.MADs.Retried, Lost: doc.MADs.Lost, Unmatched: doc.MADs.Unmatched}}
	cfg := &Config{ExpectWidth: doc.Config.ExpectWidth, ExpectSpeed: doc.Config.ExpectSpeed}
	if name := doc.Config.ExpectedFile; name != "" {
		if filepath.Base(name) != name {
			return nil, nil, fmt.Errorf("%s: expected_file %q is not a file of the directory", SnapshotFile, name)
		}
		if cfg.Expected, err = LoadExpected(filepath.Join(dir, name)); err != nil {
			return nil, nil, err
		}
	}
	for _, d := range doc.MADLoss {
		s.Loss = append(s.Loss, DestLoss{d.Dest, d.Attempts, d.NoReply, d.Replies})
	}
	for _, d := range doc.SMInfo {
		p, err := portOf(f, d.portDoc)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: sm_info: %w", SnapshotFile, err)
		}
		r := SMInfoRead{Port: p, Info: mad.SMInfo{GUID: d.SMGUID, SMState: mad.SMState(d.SMState), Priority: d.Priority, ActCount: d.ActivityCount}}
		if d.Error != "" {
			r = SMInfoRead{Port: p, Err: errors.New(d.Error)}
		}
		s.SMInfo = append(s.SMInfo, r)
	}
	for _, d := range doc.PKeyTables {
		p, err := portOf(f, d.portDoc)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: pkey_tables: %w", SnapshotFile, err)
		}
		r := PKeyRead{Port: p, PKeys: d.PKeys}
		if d.Error != "" {
			r = PKeyRead{Port: p, Err: errors.New(d.Error)}
		}
		s.PKeys = append(s.PKeys, r)
	}
	for _, d := range doc.MlnxExtPortInfo {
		p, err := portOf(f, d.portDoc)
		if err == nil {
			p.MlnxExtPortInfo, err = hex.DecodeString(d.Data)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("%s: mlnx_ext_port_info: %w", SnapshotFile, err)
		}
	}
	if err := loadHealth(dir, &doc, s, cfg); err != nil {
		return nil, nil, err
	}
	if err := loadTables(dir, s); err != nil {
		return nil, nil, err
	}
	return s, cfg, nil
}

// portOf is the port a document names.
func portOf(f *discovery.Fabric, d portDoc) (*discovery.Port, error) {
	n := f.Node(uint64(d.NodeGUID))
	if n == nil {
		return nil, fmt.Errorf("no node %s in %s", d.NodeGUID, FabricFile)
	}
	p := n.Port(d.Port)
	if p == nil {
		return nil, fmt.Errorf("node %s has no port %d in %s", d.NodeGUID, d.Port, FabricFile)
	}
	return p, nil
}
