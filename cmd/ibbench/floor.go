package main

import (
	"encoding/binary"
	"fmt"
	"sort"
	"time"

	"github.com/ibtool/ibtool/internal/cache"
	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/simfabric"
	"github.com/ibtool/ibtool/internal/umad"
)

// The simulator floor: how many MADs per second ibsim answers when a
// client keeps a window of requests in flight and does nothing else. No
// tool can be faster than its MADs at that rate; the table shows how
// close each comes.

const (
	floorWindow = 64    // in flight: enough to keep ibsim busy, below its UDP limit
	floorMADs   = 20000 // per measurement
	floorTries  = 3     // measurements; the median is reported
)

// simFloor measures the floor on fab, attached where the tools are: DR
// NodeInfo SMPs to the host's switch and its neighbours.
func simFloor(fab *simfabric.Fabric) (float64, error) {
	return measureFloor(fab, func(port umad.Port) (func(uint32) *umad.Packet, error) {
		paths, err := floorPaths(port)
		if err != nil {
			return nil, err
		}
		return drNodeInfo(paths), nil
	})
}

// measureFloor is floorMedian on a port of its own, attached where the
// tools are, of the requests that requests makes for that port.
func measureFloor(fab *simfabric.Fabric, requests func(umad.Port) (func(uint32) *umad.Packet, error)) (float64, error) {
	cfg := umad.SimConfig{ServerName: "127.0.0.1", ServerPort: fab.ServerPort(), Host: attach}
	port, err := umad.NewSim(cfg).Open("", -1)
	if err != nil {
		return 0, err
	}
	defer port.Close()
	bp, ok := port.(umad.BatchPort)
	if !ok {
		return 0, fmt.Errorf("the simulator port moves no batches")
	}
	request, err := requests(port)
	if err != nil {
		return 0, err
	}
	return floorMedian(bp, request)
}

// floorMedian is the median of floorTries floor measurements.
func floorMedian(bp umad.BatchPort, request func(uint32) *umad.Packet) (float64, error) {
	var rates []float64
	for range floorTries {
		r, err := floorRate(bp, request)
		if err != nil {
			return 0, err
		}
		rates = append(rates, r)
	}
	sort.Float64s(rates)
	return rates[len(rates)/2], nil
}

// floorPaths are directed routes to the attached CA's switch and to that
// switch's neighbours: requests the walk of every fabric command sends.
func floorPaths(port umad.Port) ([][]byte, error) {
	sw, err := floorAsk(port, []byte{1})
	if err != nil {
		return nil, fmt.Errorf("NodeInfo of the host's switch: %w", err)
	}
	paths := [][]byte{{1}}
	for p := 1; p <= int(sw[4]); p++ { // NodeInfo.NumPorts
		if _, err := floorAsk(port, []byte{1, byte(p)}); err == nil {
			paths = append(paths, []byte{1, byte(p)})
		}
	}
	return paths, nil
}

// floorAsk sends one DR NodeInfo and returns the attribute.
func floorAsk(port umad.Port, path []byte) ([]byte, error) {
	m := mad.NewDRSMP(mad.MethodGet, 0x11, 0, path)
	m.SetTID(1)
	if err := port.Send(&umad.Packet{Addr: umad.Address{LID: umad.PermissiveLID}, MAD: m}); err != nil {
		return nil, err
	}
	for {
		pkt, err := port.Recv(time.Now().Add(2 * time.Second))
		if err != nil {
			return nil, err
		}
		h := mad.Header(pkt.MAD)
		if h.TID32() != 1 {
			continue
		}
		if pkt.Status != 0 || binary.BigEndian.Uint16(pkt.MAD[4:])&0x7FFF != 0 {
			return nil, fmt.Errorf("no node at %v", path)
		}
		return pkt.MAD[64:128], nil
	}
}

// floorRate keeps floorWindow requests in flight, each made by request
// with its TID, answering every batch of replies with as many requests,
// and returns replies per second.
func floorRate(bp umad.BatchPort, request func(tid uint32) *umad.Packet) (float64, error) {
	next := uint32(100)
	newRequest := func() *umad.Packet {
		next++
		return request(next)
	}
	var out []*umad.Packet
	for range floorWindow {
		out = append(out, newRequest())
	}
	into := make([]*umad.Packet, 16)
	start := time.Now()
	sent, got := 0, 0
	for got < sent || sent < floorMADs {
		n, err := bp.SendBatch(out)
		sent += n
		if err != nil {
			return 0, err
		}
		m, err := bp.RecvBatch(time.Now().Add(5*time.Second), into)
		if err != nil {
			return 0, fmt.Errorf("after %d replies: %w", got, err)
		}
		got += m
		out = out[:0]
		for range m {
			if sent+len(out) < floorMADs {
				out = append(out, newRequest())
			}
		}
	}
	return float64(got) / time.Since(start).Seconds(), nil
}

// drNodeInfo is a floor request: a DR NodeInfo over one of paths.
func drNodeInfo(paths [][]byte) func(uint32) *umad.Packet {
	return func(tid uint32) *umad.Packet {
		m := mad.NewDRSMP(mad.MethodGet, 0x11, 0, paths[int(tid)%len(paths)])
		m.SetTID(uint64(tid))
		return &umad.Packet{Addr: umad.Address{LID: umad.PermissiveLID}, MAD: m}
	}
}

// pmaPortCounters is a PMA floor request: a PerfMgt Get of PortCounters
// (PortSelect 1) to one of lids in turn, as ibqueryerrors reads them.
func pmaPortCounters(lids []uint16) func(uint32) *umad.Packet {
	return func(tid uint32) *umad.Packet {
		m := mad.NewGet(mad.ClassPerf, 1, mad.AttrPortCounters, 0)
		m[mad.GSDataOffset+1] = 1 // PortSelect
		m.SetTID(uint64(tid))
		return &umad.Packet{Addr: umad.Address{LID: lids[int(tid)%len(lids)], QP: 1, QKey: umad.QP1QKey}, MAD: m}
	}
}

// pmaFloor is the floor of PerfMgt MADs: the rate of PortCounters Gets
// to every PMA of the fabric in the cache file, routed by LID across the
// fabric as ibqueryerrors' are (ibsim forwards each through every
// switch's table on the way, where the DR floor's go one or two hops).
func pmaFloor(fab *simfabric.Fabric, cacheFile string) (float64, error) {
	f, err := cache.Read(cacheFile)
	if err != nil {
		return 0, err
	}
	var lids []uint16
	for _, n := range f.Nodes {
		for _, p := range n.Ports {
			if p != nil && p.BaseLID != 0 && (n.Type != discovery.NodeSwitch || p.Num == 0) {
				lids = append(lids, p.BaseLID)
				break
			}
		}
	}
	if len(lids) == 0 {
		return 0, fmt.Errorf("no LIDs in %s", cacheFile)
	}
	return measureFloor(fab, func(umad.Port) (func(uint32) *umad.Packet, error) { return pmaPortCounters(lids), nil })
}
