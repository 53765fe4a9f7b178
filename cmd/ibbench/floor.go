package main

import (
	"encoding/binary"
	"fmt"
	"sort"
	"time"

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

// simFloor measures the floor on fab, attached where the tools are.
func simFloor(fab *simfabric.Fabric) (float64, error) {
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
	paths, err := floorPaths(port)
	if err != nil {
		return 0, err
	}
	var rates []float64
	for range floorTries {
		r, err := floorRate(bp, paths)
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

// floorRate keeps floorWindow NodeInfo requests in flight over paths,
// answering every batch of replies with as many requests, and returns
// replies per second.
func floorRate(bp umad.BatchPort, paths [][]byte) (float64, error) {
	next := uint32(100)
	request := func() *umad.Packet {
		next++
		m := mad.NewDRSMP(mad.MethodGet, 0x11, 0, paths[int(next)%len(paths)])
		m.SetTID(uint64(next))
		return &umad.Packet{Addr: umad.Address{LID: umad.PermissiveLID}, MAD: m}
	}
	var out []*umad.Packet
	for range floorWindow {
		out = append(out, request())
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
				out = append(out, request())
			}
		}
	}
	return float64(got) / time.Since(start).Seconds(), nil
}
