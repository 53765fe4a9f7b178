package cache

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/ibtool/ibtool/internal/discovery"
)

// Encode writes f to w in libibnetdisc's cache format (the main file only).
func Encode(w io.Writer, f *discovery.Fabric) error {
	return EncodeWith(w, f, WriteOptions{})
}

// EncodeWith is Encode with options.
func EncodeWith(w io.Writer, f *discovery.Fabric, opts WriteOptions) error {
	p, err := plan(f, opts)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	p.write(bw)
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("cache: %w", err)
	}
	return nil
}

// layout is what Encode writes, in file order, checked beforehand.
type layout struct {
	from    uint64
	maxHops uint32
	nodes   []*discovery.Node // file order: newest first
	ports   []*discovery.Port // hash-bucket order
	// owner maps every port written to its node (a port's Node field may
	// be unset).
	owner map[*discovery.Port]*discovery.Node
}

// plan validates f and orders its records; nothing is written unless the
// whole fabric can be.
func plan(f *discovery.Fabric, opts WriteOptions) (*layout, error) {
	if f == nil {
		return nil, fmt.Errorf("cache: no fabric to write")
	}
	if f.From == nil {
		return nil, fmt.Errorf("cache: the fabric has no From node (the node discovery started at); libibnetdisc needs one")
	}
	if f.MaxHops < 0 || int64(f.MaxHops) > 1<<32-1 {
		return nil, fmt.Errorf("cache: MaxHops %d does not fit the format's u32", f.MaxHops)
	}
	l := &layout{from: f.From.GUID, maxHops: uint32(f.MaxHops), owner: map[*discovery.Port]*discovery.Node{}}
	seenNode := make(map[uint64]*discovery.Node, len(f.Nodes))
	seenPort := map[portKey]*discovery.Port{}
	fromFound := false
	for i := len(f.Nodes) - 1; i >= 0; i-- {
		n := f.Nodes[i]
		if n == nil {
			return nil, fmt.Errorf("cache: Nodes[%d] is nil", i)
		}
		if old := seenNode[n.GUID]; old != nil {
			return nil, fmt.Errorf("cache: two nodes with GUID 0x%016x", n.GUID)
		}
		seenNode[n.GUID] = n
		fromFound = fromFound || n == f.From
		if err := checkNode(n); err != nil {
			return nil, err
		}
		keys := 0
		for num, p := range n.Ports {
			if p == nil {
				continue
			}
			if num > n.NumPorts {
				return nil, fmt.Errorf("cache: node 0x%016x: port %d is beyond its %d ports", n.GUID, num, n.NumPorts)
			}
			if p.Num != num {
				return nil, fmt.Errorf("cache: node 0x%016x: Ports[%d] says it is port %d", n.GUID, num, p.Num)
			}
			if p.Node != nil && p.Node != n {
				return nil, fmt.Errorf("cache: node 0x%016x: port %d belongs to node 0x%016x", n.GUID, num, p.Node.GUID)
			}
			if p.ExtNum < 0 || p.ExtNum > 255 {
				return nil, fmt.Errorf("cache: node 0x%016x port %d: external port number %d does not fit a byte", n.GUID, num, p.ExtNum)
			}
			if len(p.PortInfo) > blobLen {
				return nil, fmt.Errorf("cache: node 0x%016x port %d: PortInfo is %d bytes, at most %d", n.GUID, num, len(p.PortInfo), blobLen)
			}
			k := portKey{p.GUID, uint8(num)}
			if old := seenPort[k]; old != nil {
				return nil, fmt.Errorf("cache: port GUID 0x%016x port %d is on two nodes (0x%016x and 0x%016x); libibnetdisc could not load that", p.GUID, num, l.owner[old].GUID, n.GUID)
			}
			seenPort[k] = p
			l.owner[p] = n
			keys++
		}
		if keys > maxStoredKeys {
			return nil, fmt.Errorf("cache: node 0x%016x has %d ports; the format stores at most %d per node", n.GUID, keys, maxStoredKeys)
		}
		l.nodes = append(l.nodes, n)
	}
	if !fromFound {
		return nil, fmt.Errorf("cache: the From node 0x%016x is not among the fabric's nodes", f.From.GUID)
	}

	// Port records in libibnetdisc's hash-table order (see the package doc).
	bucketGUID := func(p *discovery.Port) uint64 { return p.GUID }
	if opts.BucketGUID != nil {
		bucketGUID = opts.BucketGUID
	}
	var buckets [hashSize][]*discovery.Port
	for _, n := range l.nodes {
		for num := len(n.Ports) - 1; num >= 0; num-- {
			if p := n.Ports[num]; p != nil {
				b := HashGUID(bucketGUID(p)) % hashSize
				buckets[b] = append(buckets[b], p)
			}
		}
	}
	l.ports = make([]*discovery.Port, 0, len(l.owner))
	for _, b := range buckets {
		l.ports = append(l.ports, b...)
	}
	return l, nil
}

func checkNode(n *discovery.Node) error {
	if n.Type < 0 || n.Type > 255 {
		return fmt.Errorf("cache: node 0x%016x: type %d does not fit a byte", n.GUID, n.Type)
	}
	if n.NumPorts < 0 || n.NumPorts > 255 {
		return fmt.Errorf("cache: node 0x%016x: %d ports do not fit a byte", n.GUID, n.NumPorts)
	}
	for _, b := range []struct {
		name string
		data []byte
	}{{"SwitchInfo", n.SwitchInfo}, {"NodeInfo", n.NodeInfo}, {"NodeDescription", n.NodeDesc}} {
		if len(b.data) > blobLen {
			return fmt.Errorf("cache: node 0x%016x: %s is %d bytes, at most %d", n.GUID, b.name, len(b.data), blobLen)
		}
	}
	return nil
}

func (l *layout) write(w *bufio.Writer) {
	var buf [headerLen]byte
	binary.LittleEndian.PutUint32(buf[0:], Magic)
	binary.LittleEndian.PutUint32(buf[4:], Version)
	binary.LittleEndian.PutUint32(buf[8:], uint32(len(l.nodes)))
	binary.LittleEndian.PutUint32(buf[12:], uint32(len(l.ports)))
	binary.LittleEndian.PutUint64(buf[16:], l.from)
	binary.LittleEndian.PutUint32(buf[24:], l.maxHops)
	w.Write(buf[:])
	for _, n := range l.nodes {
		writeNode(w, n)
	}
	for _, p := range l.ports {
		l.writePort(w, p)
	}
}

func putU16(w *bufio.Writer, v uint16) { w.Write(binary.LittleEndian.AppendUint16(nil, v)) }
func putU64(w *bufio.Writer, v uint64) { w.Write(binary.LittleEndian.AppendUint64(nil, v)) }

// putBlob writes b zero-padded to 64 bytes.
func putBlob(w *bufio.Writer, b []byte) {
	var buf [blobLen]byte
	copy(buf[:], b)
	w.Write(buf[:])
}

func writeNode(w *bufio.Writer, n *discovery.Node) {
	putU16(w, n.SMALID)
	w.WriteByte(n.SMALMC)
	if n.EnhancedSP0 {
		w.WriteByte(1)
	} else {
		w.WriteByte(0)
	}
	putBlob(w, n.SwitchInfo)
	putU64(w, n.GUID)
	w.WriteByte(uint8(n.Type))
	w.WriteByte(uint8(n.NumPorts))
	putBlob(w, n.NodeInfo)
	putBlob(w, n.NodeDesc)
	keys := 0
	for _, p := range n.Ports {
		if p != nil {
			keys++
		}
	}
	w.WriteByte(uint8(keys))
	for num, p := range n.Ports {
		if p != nil {
			putU64(w, p.GUID)
			w.WriteByte(uint8(num))
		}
	}
}

func (l *layout) writePort(w *bufio.Writer, p *discovery.Port) {
	putU64(w, p.GUID)
	w.WriteByte(uint8(p.Num))
	w.WriteByte(uint8(p.ExtNum))
	putU16(w, p.BaseLID)
	w.WriteByte(p.LMC)
	putBlob(w, p.PortInfo)
	putU64(w, l.owner[p].GUID)
	if r := p.Remote; r != nil && l.owner[r] != nil {
		w.WriteByte(1)
		putU64(w, r.GUID)
		w.WriteByte(uint8(r.Num))
	} else {
		w.WriteByte(0)
		putU64(w, 0)
		w.WriteByte(0)
	}
}
