package ibqueryerrors

// ibqueryerrors' node names, read late: the text names only the nodes
// with errors (or failed reads), so the walk need not read every node's
// NodeDescription, a tenth of its MADs; readNames reads those few.

import (
	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/query"
)

// namesLater tells whether the text needs the names of only the nodes
// with errors (or failed reads): then the walk skips the
// NodeDescriptions, a tenth of its MADs, and readNames reads those few.
// JSON, --counters and -r name every node (or its peers); -k/-K name the
// nodes whose resets fail, which only the resets tell.
func (q *qeRun) namesLater() bool {
	o := q.opts
	return !o.JSON && !o.countersOnly && o.reportPort == 0 && !o.clearErrors && !o.clearCounts
}

// readNames reads the NodeDescription of the nodes checked whose text
// names them, when the walk did not (namesLater), as libibnetdisc's walk
// would have: over the node's directed route. One that fails is a walk
// error, and the node goes nameless, as it would have in the walk.
func (q *qeRun) readNames() {
	if q.fab == nil || q.fab.Has(discovery.LoadNodeDesc) {
		return
	}
	var named []*qeNode
	var jobs []query.Job
	for _, qn := range q.nodes {
		if qn.named() {
			named = append(named, qn)
			jobs = append(jobs, query.Job{Dest: query.DR(qn.node.DRPath)})
		}
	}
	for i, r := range query.FanOut[mad.NodeDescription](q.ctx, q.client, jobs) {
		n := named[i].node
		if r.Err != nil {
			q.fab.Errors = append(q.fab.Errors, &discovery.WalkError{DRPath: n.DRPath, What: "NodeDescription", Err: r.Err})
			continue
		}
		n.NodeDesc = append([]byte(nil), r.Value.NodeString[:]...)
		named[i].name = q.names.Name(n.GUID, string(n.NodeDesc))
	}
}

// named tells whether the text names qn: it has a counter above its
// threshold or a read that failed.
func (qn *qeNode) named() bool {
	if qn.caps.Err != nil {
		return true
	}
	ports := qn.ports
	if qn.all != nil {
		ports = append([]*qePort{qn.all}, ports...)
	}
	for _, p := range ports {
		if len(p.exceeded) > 0 || p.counters.Err != nil {
			return true
		}
		for _, d := range p.details {
			if d.err != nil {
				return true
			}
		}
	}
	return false
}
