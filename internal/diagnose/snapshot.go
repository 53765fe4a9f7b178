package diagnose

import (
	"time"

	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/query"
	"github.com/ibtool/ibtool/internal/routing"
	"github.com/ibtool/ibtool/internal/rpc"
)

// Snapshot is everything a sweep read, and all the checks look at: they
// never ask the fabric themselves, so that a snapshot saved with Save and
// read back with Load gives the same findings offline.
type Snapshot struct {
	// Source says where the fabric came from: "walk" (SMPs), "sa" (the
	// SA's records) or "cache" (--load-cache; the rest was read live).
	Source string
	// Fabric is the walk: NodeInfo, NodeDescription, SwitchInfo and the
	// PortInfo of every port discovery reads, the links, and what could
	// not be read (Fabric.Errors).
	Fabric *discovery.Fabric
	// SMInfo is the SMInfo of every port whose PortInfo says IsSM, in
	// the fabric's order (node GUID, port).
	SMInfo []SMInfoRead
	// PKeys are the P_Key tables of both ends of every link into a
	// switch port that enforces partitions (PortInfo's
	// PartitionEnforcementInbound or Outbound), in the same order.
	PKeys []PKeyRead
	// Loss are the destinations to which MAD attempts got no reply, with
	// their counts (nil when the sweep did not record them).
	Loss []DestLoss
	// MADs are the engine's totals (zero offline).
	MADs rpc.Stats

	// Counters are two reads of the counters of both ends of every link,
	// Interval apart (the second nil with an interval of 0), for the
	// counters check; nil when the sweep did not read them.
	Counters *CounterReads
	// Hidden are the nodes behind switch ports that are up but the walk
	// left without a link (a node whose GUID the walk already knew), for
	// the ids check.
	Hidden []HiddenRead

	// Tables are the switches' forwarding tables (internal/routing's
	// model) for the routing, credit_loops and multicast checks: every
	// LFT, the MFTs with SweepOptions.Multicast, and the SL2VL tables
	// where they can change the credit-loop analysis (tables.go). Nil
	// when not read (a snapshot saved before they were).
	Tables *routing.Tables
	// MCMembers are the multicast groups' members as the SA lists them,
	// with SweepOptions.Multicast; nil otherwise.
	MCMembers *MCMembers
	// routes is the analysis of Tables the routing and credit_loops
	// checks share, made on first use.
	routes *routeAnalysis
}

// SMInfoRead is the SMInfo of one SM port, or why it could not be read.
type SMInfoRead struct {
	Port *discovery.Port
	// Info is the SMInfo as the SM answered, its SM_Key cleared (it is a
	// secret, and no check needs it).
	Info mad.SMInfo
	Err  error
}

// PKeyRead is the P_Key table of one port, or why it could not be read.
type PKeyRead struct {
	Port *discovery.Port
	// PKeys are the table's entries up to the port's capacity
	// (NodeInfo.PartitionCap of a CA, SwitchInfo.PartitionEnforcementCap
	// of a switch port), zero entries included.
	PKeys []uint16
	Err   error
}

// DestLoss is how the MADs to one destination fared: every attempt sent,
// those that got no reply (or came back undelivered), and the replies.
type DestLoss struct {
	// Dest is the destination as the engine names it: "DR path 0,1,4"
	// or "LID 12".
	Dest     string
	Attempts int
	NoReply  int
	Replies  int
}

// CounterReads are two reads of the counters of every port (readCounters),
// First[i] and Second[i] of one port.
type CounterReads struct {
	// Interval is the time from the start of the first read to the
	// start of the second, to the millisecond.
	Interval time.Duration
	First    []query.PortCounters
	// Second is nil with an interval of 0.
	Second []query.PortCounters
}

// Complete reports whether the sweep read everything it set out to: no
// walk error, no SMInfo, P_Key table or forwarding table that did not
// answer (nor a counter or hidden node).
func (s *Snapshot) Complete() bool {
	if s.Fabric == nil || len(s.Fabric.Errors) > 0 {
		return false
	}
	for _, r := range s.SMInfo {
		if r.Err != nil {
			return false
		}
	}
	for _, r := range s.PKeys {
		if r.Err != nil {
			return false
		}
	}
	return s.healthFailures() == 0 && len(s.tableFailures()) == 0
}

// Failures counts the reads that did not answer: walk errors, SMInfo,
// P_Key tables, counters, hidden nodes and forwarding tables.
func (s *Snapshot) Failures() int {
	n := 0
	if s.Fabric != nil {
		n = len(s.Fabric.Errors)
	}
	for _, r := range s.SMInfo {
		if r.Err != nil {
			n++
		}
	}
	for _, r := range s.PKeys {
		if r.Err != nil {
			n++
		}
	}
	return n + s.healthFailures() + len(s.tableFailures())
}
