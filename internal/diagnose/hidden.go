package diagnose

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/query"
)

// Nodes the walk could not see: a walk knows nodes by their GUID (as
// libibnetdisc does), so a second node with a GUID it has already met is
// taken for the first, and the port it was found behind is left without
// a link. The sweep asks every switch port that is up but has no link
// what is behind it; the ids check compares the answers with the walk.

// HiddenRead is what answered behind a switch port that is up but the
// walk left without a link: its NodeInfo and NodeDescription as read.
type HiddenRead struct {
	// Port is the switch port.
	Port *discovery.Port
	// Node is what answered, a node of its own (not in the fabric) with
	// its NodeInfo, NodeDescription and DRPath; nil when Err.
	Node *discovery.Node
	Err  error
}

// hiddenPorts are the switch ports that are up, have no link in the
// walk, and were not reported by it as not answering; only where the
// switch's directed route is known and one hop more still fits.
func hiddenPorts(f *discovery.Fabric) []*discovery.Port {
	failed := map[string]bool{}
	for _, e := range f.Errors {
		failed[string(e.DRPath)] = true
	}
	return sortedPorts(f, func(p *discovery.Port) bool {
		n := p.Node
		return n.Type == discovery.NodeSwitch && p.Num > 0 && p.Remote == nil && len(p.PortInfo) > 0 &&
			p.Info().PortPhysicalState == mad.PhysPortStateLinkUp &&
			len(n.DRPath) > 0 && len(n.DRPath) < mad.MaxDRHops && !failed[string(behind(p))]
	})
}

// behind is the directed route to what is behind switch port p.
func behind(p *discovery.Port) []byte {
	return append(append([]byte(nil), p.Node.DRPath...), byte(p.Num))
}

// readHidden reads NodeInfo, then NodeDescription, behind each of
// hiddenPorts (none on a fabric the walk saw whole).
func readHidden(ctx context.Context, c *query.Client, f *discovery.Fabric) []HiddenRead {
	ports := hiddenPorts(f)
	if len(ports) == 0 {
		return nil
	}
	reads := make([]HiddenRead, len(ports))
	jobs := make([]query.Job, len(ports))
	for i, p := range ports {
		reads[i].Port = p
		jobs[i] = query.Job{Dest: query.DR(behind(p))}
	}
	infos := query.FanOut[mad.NodeInfo](ctx, c, jobs)
	var descJobs []query.Job
	var owner []int
	for i, r := range infos {
		if r.Err != nil {
			reads[i].Err = r.Err
			continue
		}
		reads[i].Node = &discovery.Node{GUID: uint64(r.Value.NodeGUID), Type: int(r.Value.NodeType),
			NumPorts: int(r.Value.NumPorts), NodeInfo: mad.Encode(&r.Value), DRPath: behind(ports[i])}
		descJobs = append(descJobs, jobs[i])
		owner = append(owner, i)
	}
	for j, r := range query.FanOut[mad.NodeDescription](ctx, c, descJobs) {
		rd := &reads[owner[j]]
		if r.Err != nil {
			rd.Node, rd.Err = nil, r.Err
			continue
		}
		rd.Node.NodeDesc = bytes.Clone(r.Value.NodeString[:])
	}
	return reads
}

// hiddenDoc is a HiddenRead in snapshot.json: NodeInfo and
// NodeDescription as read, in hex.
type hiddenDoc struct {
	portDoc
	NodeInfo string `json:"node_info,omitempty"`
	NodeDesc string `json:"node_description,omitempty"`
	Error    string `json:"error,omitempty"`
}

func hiddenDocs(reads []HiddenRead) []hiddenDoc {
	out := []hiddenDoc{}
	for _, r := range reads {
		d := hiddenDoc{portDoc: docOf(r.Port)}
		if r.Err != nil {
			d.Error = r.Err.Error()
		} else {
			d.NodeInfo, d.NodeDesc = hex.EncodeToString(r.Node.NodeInfo), hex.EncodeToString(r.Node.NodeDesc)
		}
		out = append(out, d)
	}
	return out
}

func hiddenReads(f *discovery.Fabric, docs []hiddenDoc) ([]HiddenRead, error) {
	var out []HiddenRead
	for _, d := range docs {
		p, err := portOf(f, d.portDoc)
		if err != nil {
			return nil, fmt.Errorf("hidden_nodes: %w", err)
		}
		r := HiddenRead{Port: p}
		if d.Error != "" {
			r.Err = errors.New(d.Error)
			out = append(out, r)
			continue
		}
		ni, err1 := hex.DecodeString(d.NodeInfo)
		nd, err2 := hex.DecodeString(d.NodeDesc)
		var info mad.NodeInfo
		if err := errors.Join(err1, err2); err != nil || len(ni) < mad.NodeInfoSize || info.Unmarshal(ni) != nil {
			return nil, fmt.Errorf("hidden_nodes: node %s port %d: NodeInfo %q: not a NodeInfo in hex", d.NodeGUID, d.Port, d.NodeInfo)
		}
		r.Node = &discovery.Node{GUID: uint64(info.NodeGUID), Type: int(info.NodeType), NumPorts: int(info.NumPorts),
			NodeInfo: ni, NodeDesc: nd, DRPath: behind(p)}
		out = append(out, r)
	}
	return out, nil
}
