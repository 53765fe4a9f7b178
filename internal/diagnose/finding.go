package diagnose

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/fabricdoc"
	"github.com/ibtool/ibtool/internal/jsonv"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/nodename"
)

// Severity says how bad a finding is. The order is the order findings
// are listed in: errors first.
type Severity int

const (
	// Error: the fabric is broken there (traffic is lost, misrouted or
	// slower than the hardware allows through no choice of the site).
	Error Severity = iota
	// Warning: probably unintended, or a choice worth a second look.
	Warning
	// Info: a fact the operator wants in the report, nothing wrong.
	Info
)

var severityNames = [...]string{"error", "warning", "info"}

func (s Severity) String() string {
	if int(s) < len(severityNames) {
		return severityNames[s]
	}
	return fmt.Sprintf("severity(%d)", int(s))
}

// MarshalJSON writes the severity's name.
func (s Severity) MarshalJSON() ([]byte, error) { return json.Marshal(s.String()) }

// Place is the node and port a finding is about.
type Place struct {
	NodeGUID uint64
	NodeName string
	NodeType jsonv.NodeType
	// Port is the port's number; NoPort when the finding is about the
	// node as a whole.
	Port int
}

// NoPort is Place.Port of a finding about a whole node.
const NoPort = -1

// Field is one piece of a finding's evidence: a key of the JSON
// vocabulary (docs/json.md) and its value.
type Field struct {
	Key   string
	Value any
}

// Finding is one thing a check found.
type Finding struct {
	Check    string
	Code     string
	Severity Severity
	// Message says what is wrong in a sentence, without the place (the
	// text output puts the place before it).
	Message string
	// At is where, nil for the fabric as a whole (no master SM).
	At *Place
	// Remote is the far end of At's link, when the finding is about a
	// link.
	Remote *jsonv.LinkEnd
	// Evidence are the values the finding rests on, in the order shown.
	Evidence []Field
}

// MarshalJSON writes the finding as docs/diagnose.md shows it: its fixed
// keys, then its evidence as keys of the same object.
func (f *Finding) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	first := true
	put := func(key string, v any) error {
		val, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("finding %s: %s: %w", f.Code, key, err)
		}
		if !first {
			b.WriteByte(',')
		}
		first = false
		k, _ := json.Marshal(key)
		b.Write(k)
		b.WriteByte(':')
		b.Write(val)
		return nil
	}
	fields := []Field{{"check", f.Check}, {"code", f.Code}, {"severity", f.Severity}, {"message", f.Message}}
	if f.At != nil {
		fields = append(fields, Field{"node_guid", mad.GUID(f.At.NodeGUID)}, Field{"node_name", f.At.NodeName})
		if f.At.NodeType != "" {
			fields = append(fields, Field{"node_type", f.At.NodeType})
		}
		if f.At.Port != NoPort {
			fields = append(fields, Field{"port", f.At.Port})
		}
	}
	if f.Remote != nil {
		fields = append(fields, Field{"remote", f.Remote})
	}
	for _, fl := range append(fields, f.Evidence...) {
		if err := put(fl.Key, fl.Value); err != nil {
			return nil, err
		}
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// Get is the value of an evidence key, nil when the finding has none.
func (f *Finding) Get(key string) any {
	for _, fl := range f.Evidence {
		if fl.Key == key {
			return fl.Value
		}
	}
	return nil
}

// placeOf is the place of port p (NoPort for p nil: the node n).
func placeOf(n *discovery.Node, p *discovery.Port, names *nodename.Map) *Place {
	pl := &Place{NodeGUID: n.GUID, NodeName: nodeName(n, names), NodeType: fabricdoc.NodeTypeOf(n), Port: NoPort}
	if p != nil {
		pl.Port = p.Num
	}
	return pl
}

// linkEnd is port p as the far end of a link, in the vocabulary.
func linkEnd(p *discovery.Port, names *nodename.Map) *jsonv.LinkEnd {
	return &jsonv.LinkEnd{
		NodeGUID: mad.GUID(p.Node.GUID), NodeName: nodeName(p.Node, names), NodeType: fabricdoc.NodeTypeOf(p.Node),
		Port: p.Num, ExternalPort: p.ExtNum, PortGUID: mad.GUID(p.GUID), LID: fabricdoc.RemoteLID(p),
	}
}

// nodeName is the name findings give a node: the node-name-map's, else
// its NodeDescription as the C tools clean it.
func nodeName(n *discovery.Node, names *nodename.Map) string {
	return names.Name(n.GUID, n.Desc())
}

// atPort is a finding's place and remote for port p (the remote left out
// when p has no link).
func atPort(f Finding, p *discovery.Port, names *nodename.Map) Finding {
	f.At = placeOf(p.Node, p, names)
	if p.Remote != nil {
		f.Remote = linkEnd(p.Remote, names)
	}
	return f
}
