package exporter

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/ibtool/ibtool/internal/discovery"
)

// Shard is the part of the fabric one exporter exports when several
// split a very large fabric (--shard i/n): shard Index of Count, counted
// from 0 as Prometheus' hashmod relabelling counts. A fabric is split by
// switch: a switch goes to the shard its GUID hashes to, and a CA or
// router goes with the switch its first linked port leads to, so each
// link's two ends and every node's series land in one shard and the
// shards' union is the whole fabric, each series once. The zero Shard is
// the whole fabric.
type Shard struct {
	Index, Count int
}

// ParseShard reads "i/n" (0 <= i < n).
func ParseShard(s string) (Shard, error) {
	is, ns, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(is)
	n, err2 := strconv.Atoi(ns)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n {
		return Shard{}, fmt.Errorf("invalid shard %q: want i/n with 0 <= i < n, e.g. 0/3, 1/3 and 2/3", s)
	}
	return Shard{Index: i, Count: n}, nil
}

func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.Index, s.Count) }

// Has tells whether the shard holds a node owned by the switch (or node)
// with GUID owner.
func (s Shard) Has(owner uint64) bool {
	return s.Count <= 1 || int(mix(owner)%uint64(s.Count)) == s.Index
}

// mix spreads a GUID's bits (splitmix64's finaliser): vendors assign
// GUIDs in sequence, and a plain GUID modulo n would follow whatever
// pattern the sequence has.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// shardOwners maps every node to the GUID that decides its shard: a
// switch's own, a CA's or router's the switch of its lowest-numbered
// port linked to one (its own if none).
func shardOwners(f *discovery.Fabric) map[*discovery.Node]uint64 {
	owner := make(map[*discovery.Node]uint64, len(f.Nodes))
	for _, n := range f.Nodes {
		owner[n] = n.GUID
		if n.Type == discovery.NodeSwitch {
			continue
		}
		for _, p := range n.Ports {
			if p != nil && p.Remote != nil && p.Remote.Node.Type == discovery.NodeSwitch {
				owner[n] = p.Remote.Node.GUID
				break
			}
		}
	}
	return owner
}
