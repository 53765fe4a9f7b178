package diagnose

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/ibtool/ibtool/internal/counters"
	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/query"
)

// CounterDataFile holds the counter reads of a snapshot directory as the
// wire has them (docs/diagnose.md): per port read, a 16-byte header (node
// GUID, port, what follows, the PMA's two capability masks, big-endian)
// and the PortCounters and PortCountersExtended read. snapshot.json says
// how many ports and reads, and why a read failed. A 10,000-node fabric
// has 55,000 port reads: decoded from JSON they took a fifth of a second.
const CounterDataFile = "counters.data"

// The header's flags: what follows it, and whether the read failed.
const (
	counterHasBasic    = 1 << 0
	counterHasExtended = 1 << 1
	counterFailed      = 1 << 2
)

const counterHeaderSize = 16

// countersDoc is CounterReads in snapshot.json; the reads themselves are
// in CounterDataFile, Ports records a read, Reads reads.
type countersDoc struct {
	IntervalMS int64             `json:"interval_ms"`
	Ports      int               `json:"ports"`
	Reads      int               `json:"reads"`
	Errors     []counterErrorDoc `json:"errors"`
}

// counterErrorDoc is a failed read: of which read (1 or 2) and port.
type counterErrorDoc struct {
	Read int `json:"read"`
	portDoc
	Error          string `json:"error"`
	ErrorAttribute string `json:"error_attribute,omitempty"`
}

// saveCounters writes r's reads to dir and returns their description.
func saveCounters(dir string, r *CounterReads) (*countersDoc, error) {
	if r == nil {
		return nil, nil
	}
	d := &countersDoc{IntervalMS: r.Interval.Milliseconds(), Ports: len(r.First), Reads: 1, Errors: []counterErrorDoc{}}
	reads := [][]query.PortCounters{r.First}
	if r.Second != nil {
		d.Reads, reads = 2, append(reads, r.Second)
	}
	var data []byte
	for i, read := range reads {
		for _, pc := range read {
			data = appendCounterRecord(data, &pc)
			if pc.Err != nil {
				d.Errors = append(d.Errors, counterErrorDoc{Read: i + 1, portDoc: portDoc{mad.GUID(pc.NodeGUID), pc.Port},
					Error: pc.Err.Error(), ErrorAttribute: counterAttr(pc.Err)})
			}
		}
	}
	return d, writeFile(filepath.Join(dir, CounterDataFile), data)
}

func appendCounterRecord(b []byte, pc *query.PortCounters) []byte {
	var flags byte
	if pc.Basic != nil {
		flags |= counterHasBasic
	}
	if pc.Extended != nil {
		flags |= counterHasExtended
	}
	if pc.Err != nil {
		flags |= counterFailed
	}
	var caps query.PMACaps
	if pc.Caps != nil {
		caps = *pc.Caps
	}
	b = binary.BigEndian.AppendUint64(b, pc.NodeGUID)
	b = append(b, byte(pc.Port), flags)
	b = binary.BigEndian.AppendUint16(b, uint16(caps.CapabilityMask))
	b = binary.BigEndian.AppendUint32(b, caps.CapabilityMask2)
	if pc.Basic != nil {
		b = append(b, mad.Encode(pc.Basic)...)
	}
	if pc.Extended != nil {
		b = append(b, mad.Encode(pc.Extended)...)
	}
	return b
}

// loadCounters reads back what saveCounters wrote, against the fabric.
func loadCounters(dir string, f *discovery.Fabric, d *countersDoc) (*CounterReads, error) {
	if d == nil {
		return nil, nil
	}
	if d.Reads != 1 && d.Reads != 2 || d.Ports < 0 {
		return nil, fmt.Errorf("counters: %d reads of %d ports", d.Reads, d.Ports)
	}
	data, err := os.ReadFile(filepath.Join(dir, CounterDataFile))
	if err != nil {
		return nil, err
	}
	failed := map[counterErrorDoc]*savedCounterError{}
	for _, e := range d.Errors {
		failed[counterErrorDoc{Read: e.Read, portDoc: e.portDoc}] = &savedCounterError{attr: e.ErrorAttribute, text: e.Error}
	}
	r := &CounterReads{Interval: time.Duration(d.IntervalMS) * time.Millisecond}
	for read := 1; read <= d.Reads; read++ {
		out := make([]query.PortCounters, d.Ports)
		for i := range out {
			if data, err = takeCounterRecord(f, data, &out[i]); err != nil {
				return nil, fmt.Errorf("%s: read %d, record %d: %w", CounterDataFile, read, i+1, err)
			}
			key := counterErrorDoc{Read: read, portDoc: portDoc{mad.GUID(out[i].NodeGUID), out[i].Port}}
			if e := failed[key]; e != nil {
				out[i].Err = e
			} else if out[i].Err != nil {
				return nil, fmt.Errorf("%s: read %d, node %s port %d failed, and %s does not say why",
					CounterDataFile, read, key.NodeGUID, key.Port, SnapshotFile)
			}
		}
		if read == 1 {
			r.First = out
		} else {
			r.Second = out
		}
	}
	if len(data) != 0 {
		return nil, fmt.Errorf("%s: %d bytes more than %s describes", CounterDataFile, len(data), SnapshotFile)
	}
	return r, nil
}

// errNoReason marks a record whose read failed until its reason is found.
var errNoReason = errors.New("failed")

// takeCounterRecord decodes the record at the front of data into pc and
// returns the rest.
func takeCounterRecord(f *discovery.Fabric, data []byte, pc *query.PortCounters) ([]byte, error) {
	if len(data) < counterHeaderSize {
		return nil, fmt.Errorf("%d bytes, a header is %d", len(data), counterHeaderSize)
	}
	d := portDoc{mad.GUID(binary.BigEndian.Uint64(data)), int(data[8])}
	flags := data[9]
	caps := &query.PMACaps{CapabilityMask: mad.PerfCapMask(binary.BigEndian.Uint16(data[10:])),
		CapabilityMask2: binary.BigEndian.Uint32(data[12:])}
	data = data[counterHeaderSize:]
	p, err := portOf(f, d)
	if err != nil {
		return nil, err
	}
	lid := p.BaseLID
	if p.Node.Type == discovery.NodeSwitch {
		lid = p.Node.SMALID
	}
	*pc = query.PortCounters{CounterPort: query.CounterPort{NodeGUID: p.Node.GUID, NodeType: mad.NodeType(p.Node.Type),
		Port: p.Num, Dest: counters.PMADest(lid)}, Caps: caps}
	if flags&counterHasBasic != 0 {
		pc.Basic = &mad.PortCounters{}
		if data, err = take(data, pc.Basic); err != nil {
			return nil, err
		}
	}
	if flags&counterHasExtended != 0 {
		pc.Extended = &mad.PortCountersExtended{}
		if data, err = take(data, pc.Extended); err != nil {
			return nil, err
		}
	}
	if flags&counterFailed != 0 {
		pc.Err = errNoReason
	}
	return data, nil
}

// take decodes s from the front of data and returns the rest.
func take(data []byte, s mad.Struct) ([]byte, error) {
	n := s.Desc().Size
	if len(data) < n {
		return nil, fmt.Errorf("%s: %d bytes, want %d", s.Desc().Name, len(data), n)
	}
	return data[n:], s.Unmarshal(data[:n])
}
