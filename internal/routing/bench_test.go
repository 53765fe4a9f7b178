package routing

import (
	"syscall"
	"testing"
	"time"

	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/mad"
)

// fatTree is the shape of a generated three-level fat tree: pods of
// leaves and aggregation switches (every leaf linked to every
// aggregation switch of its pod), core switches in groups, aggregation
// switch j of every pod linked to each core of group j.
type fatTree struct {
	pods, leaves, aggs, hosts int
	cores                     int // a multiple of aggs
}

// s10000 is make bench's S10000 fabric: 8,874 hosts and 1,368 switches,
// 10,242 nodes.
var s10000 = fatTree{pods: 29, leaves: 18, aggs: 18, hosts: 17, cores: 324}

// s2000 is make bench's S2000 fabric's shape: 1,728 hosts, 270 switches.
var s2000 = fatTree{pods: 6, leaves: 18, aggs: 18, hosts: 16, cores: 54}

// model builds the fabric model of the tree, every port Active, and
// min-hop tables: each switch sends a LID out of one of its ports on a
// shortest path, chosen by the LID among them (the spread of OpenSM's
// minhop/updn on a fat tree).
func (ft fatTree) model() *Tables {
	f := discovery.NewFabric()
	activePI := mad.Encode(&mad.PortInfo{PortState: mad.PortStateActive, PortPhysicalState: mad.PhysPortStateLinkUp})
	lid := uint16(1)
	guid := uint64(0x1000)
	addNode := func(typ, nports int) *discovery.Node {
		guid++
		n := f.AddNode(&discovery.Node{GUID: guid, Type: typ, NumPorts: nports})
		first := 1
		if typ == discovery.NodeSwitch {
			first = 0
			n.SMALID = lid
		}
		for p := first; p <= nports; p++ {
			n.Ports[p] = &discovery.Port{Node: n, Num: p, GUID: guid, BaseLID: lid, PortInfo: activePI}
			if typ != discovery.NodeSwitch {
				n.Ports[p].BaseLID = lid
				lid++
			}
		}
		if typ == discovery.NodeSwitch {
			lid++
		}
		return n
	}
	link := func(a *discovery.Node, pa int, b *discovery.Node, pb int) { discovery.Link(a.Ports[pa], b.Ports[pb]) }
	perGroup := ft.cores / ft.aggs
	var cores []*discovery.Node
	for range ft.cores {
		cores = append(cores, addNode(discovery.NodeSwitch, ft.pods))
	}
	for p := range ft.pods {
		var aggs []*discovery.Node
		for j := range ft.aggs {
			a := addNode(discovery.NodeSwitch, ft.leaves+perGroup)
			for k := range perGroup {
				link(a, ft.leaves+1+k, cores[j*perGroup+k], p+1)
			}
			aggs = append(aggs, a)
		}
		for l := range ft.leaves {
			leaf := addNode(discovery.NodeSwitch, ft.aggs+ft.hosts)
			for j, a := range aggs {
				link(leaf, 1+j, a, 1+l)
			}
			for h := range ft.hosts {
				link(addNode(discovery.NodeCA, 1), 1, leaf, ft.aggs+1+h)
			}
		}
	}
	return minHopTables(f, int(lid))
}

// minHopTables routes every LID below top along shortest paths.
func minHopTables(f *discovery.Fabric, top int) *Tables {
	t := &Tables{Fabric: f, Switches: map[uint64]*Switch{}}
	g := newGraph(t) // no tables yet: only its links
	for _, n := range g.nodes {
		t.Switches[n.GUID] = &Switch{GUID: n.GUID, NumPorts: n.NumPorts,
			LFT: &LFT{Ports: make([]byte, (top/LIDsPerBlock+1)*LIDsPerBlock)}}
		for i := range t.Switches[n.GUID].LFT.Ports {
			t.Switches[n.GUID].LFT.Ports[i] = NoPort
		}
	}
	dists := g.distances()
	bySwitch := map[int32][]dest{}
	for _, d := range g.destinations() {
		bySwitch[d.sw] = append(bySwitch[d.sw], d)
	}
	var ports []int
	for to, ds := range bySwitch {
		dist := dists[int(to)*len(g.nodes):]
		for s, n := range g.nodes {
			lft := t.Switches[n.GUID].LFT.Ports
			ports = ports[:0]
			for p := 1; p <= n.NumPorts; p++ {
				if r := g.link[g.base[s]+int32(p)]; r >= 0 && dist[r]+1 == dist[s] {
					ports = append(ports, p)
				}
			}
			for _, d := range ds {
				switch {
				case int32(s) != to:
					lft[d.lid] = byte(ports[d.lid%len(ports)])
				case d.viaEnd:
					lft[d.lid] = byte(d.owner.Remote.Num)
				default:
					lft[d.lid] = 0
				}
			}
		}
	}
	return t
}

func TestGeneratedFatTreeIsRoutedMinHop(t *testing.T) {
	tb := fatTree{pods: 3, leaves: 4, aggs: 2, hosts: 3, cores: 4}.model()
	r := tb.Reachability()
	// 4 cores, 6 aggregation switches, 12 leaves, 36 hosts.
	if r.Switches != 22 || r.Destinations != 58 || r.Arrived != r.Pairs || r.Longer != 0 {
		t.Fatalf("%d switches, %d destinations, %d of %d arrived, %d longer", r.Switches, r.Destinations, r.Arrived, r.Pairs, r.Longer)
	}
	// A leaf to a host of another pod: up, up, down, down, and to it.
	if len(r.Hops) != 6 {
		t.Errorf("hops %v, want up to 5", r.Hops)
	}
	// The routes to the switches' LIDs turn down and up again (core to
	// core through an aggregation switch and back); those to the hosts
	// go up, then down: the channel dependency graph, of the routes to
	// CA ports, has no loop.
	cl := tb.CreditLoops()
	if cl.Channels == 0 || cl.Edges == 0 || len(cl.Loops) != 0 {
		t.Errorf("%d channels, %d dependencies, %d loops", cl.Channels, cl.Edges, len(cl.Loops))
	}
}

// benchmarkOffline times the offline analysis of the diagnosis on a
// generated fabric: reachability and credit loops. cpu-s/op is the
// process's user and system time per run (the garbage collector's other
// threads included).
func benchmarkOffline(b *testing.B, ft fatTree, vls int) {
	tb := ft.model()
	if vls != noVLs {
		twoVLs(tb, vls == perPortVLs)
	}
	var nodes, pairs, loops int
	cpu0 := cpuTime()
	b.ResetTimer()
	for range b.N {
		r, cl := tb.Analyze()
		nodes, pairs, loops = len(tb.Fabric.Nodes), r.Pairs, len(cl.Loops)
		if r.Arrived != r.Pairs {
			b.Fatalf("%d of %d pairs arrived", r.Arrived, r.Pairs)
		}
	}
	b.StopTimer()
	b.ReportMetric((cpuTime()-cpu0).Seconds()/float64(b.N), "cpu-s/op")
	b.ReportMetric(float64(nodes), "nodes")
	b.ReportMetric(float64(pairs), "pairs")
	b.ReportMetric(float64(loops), "loops")
}

func BenchmarkOfflineS2000(b *testing.B)  { benchmarkOffline(b, s2000, noVLs) }
func BenchmarkOfflineS10000(b *testing.B) { benchmarkOffline(b, s10000, noVLs) }

// With SL2VL tables on every switch port that put SL s on VL s%2
// throughout: two VLs, one graph (as a fabric without QoS: SL i on VL i).
func BenchmarkOfflineS10000SL2VL(b *testing.B) { benchmarkOffline(b, s10000, uniformVLs) }

// With SL2VL tables on every switch port that put SL s on VL (s+in)%2,
// in the input port: the VLs of a route change from hop to hop, and the
// graph is built per VL for two classes of SLs.
func BenchmarkOfflineS10000SL2VLPerPort(b *testing.B) { benchmarkOffline(b, s10000, perPortVLs) }

// How the benchmarks' switches map SLs to VLs.
const (
	noVLs = iota
	uniformVLs
	perPortVLs
)

// twoVLs gives every switch SL2VL tables for every pair of ports: SL s
// on VL s%2, or with perPort on VL (s+in)%2.
func twoVLs(tb *Tables, perPort bool) {
	for _, sw := range tb.Switches {
		sw.SL2VL = &SL2VL{Tables: map[PortPair][16]uint8{}}
		for in := 0; in <= sw.NumPorts; in++ {
			var m [16]uint8
			for sl := range m {
				m[sl] = uint8(sl % 2)
				if perPort {
					m[sl] = uint8((sl + in) % 2)
				}
			}
			for out := 1; out <= sw.NumPorts; out++ {
				sw.SL2VL.Tables[PortPair{uint8(in), uint8(out)}] = m
			}
		}
	}
}

// cpuTime is the process's user and system time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
