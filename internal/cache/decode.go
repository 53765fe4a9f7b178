package cache

import (
	"encoding/binary"
	"fmt"
	"io"

	"github.com/ibtool/ibtool/internal/discovery"
)

// Decode reads a cache in libibnetdisc's format from r (the main file only;
// DR paths stay empty).
func Decode(r io.Reader) (*discovery.Fabric, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("cache: %w", err)
	}
	return decode(data, "")
}

// portKey identifies a port in the file: (port GUID, port number).
type portKey struct {
	guid uint64
	num  uint8
}

func (k portKey) String() string { return fmt.Sprintf("0x%016x port %d", k.guid, k.num) }

type nodeRecord struct {
	node *discovery.Node
	keys []portKey
	idx  int // from 1, in file order
	off  int
}

type portRecord struct {
	port      *discovery.Port
	nodeGUID  uint64
	hasRemote bool
	remote    portKey
	idx       int
	off       int
	owner     *nodeRecord // the node whose key claimed it
}

// decoder walks the file; every read is bounds-checked.
type decoder struct {
	data []byte
	off  int
	path string
	// What is being read, for errors: record, or "record recIdx of
	// recOf" when recOf > 0 (formatted only for an error: a big cache
	// has tens of thousands of records), starting at recOff.
	record        string
	recIdx, recOf uint32
	recOff        int
}

// at says what the decoder reads next: the idx-th of n records of a kind
// (n 0: a single one) at the current offset.
func (d *decoder) at(record string, idx, n uint32) {
	d.record, d.recIdx, d.recOf, d.recOff = record, idx, n, d.off
}

func (d *decoder) errorf(format string, args ...any) error {
	record := d.record
	if d.recOf > 0 {
		record = fmt.Sprintf("%s %d of %d", d.record, d.recIdx, d.recOf)
	}
	return &FormatError{Path: d.path, Offset: int64(d.recOff), Record: record, Msg: fmt.Sprintf(format, args...)}
}

// errorAt is errorf for another record than the current one.
func (d *decoder) errorAt(record string, off int, format string, args ...any) error {
	return &FormatError{Path: d.path, Offset: int64(off), Record: record, Msg: fmt.Sprintf(format, args...)}
}

// need checks that n more bytes are there for the current record.
func (d *decoder) need(n int, what string) error {
	if left := len(d.data) - d.off; left < n {
		return d.errorf("truncated: %s needs %d bytes, the file ends %d bytes later (file size %d)", what, n, left, len(d.data))
	}
	return nil
}

func (d *decoder) u8() uint8 {
	v := d.data[d.off]
	d.off++
	return v
}

func (d *decoder) u16() uint16 {
	v := binary.LittleEndian.Uint16(d.data[d.off:])
	d.off += 2
	return v
}

func (d *decoder) u32() uint32 {
	v := binary.LittleEndian.Uint32(d.data[d.off:])
	d.off += 4
	return v
}

func (d *decoder) u64() uint64 {
	v := binary.LittleEndian.Uint64(d.data[d.off:])
	d.off += 8
	return v
}

// blob is one attribute's data: a piece of the file's bytes, which the
// fabric then owns (decode's callers hand it a buffer of its own), capped
// so that appending to it cannot run into the next field.
func (d *decoder) blob() []byte {
	b := d.data[d.off : d.off+blobLen : d.off+blobLen]
	d.off += blobLen
	return b
}

// short is the error for a file that ends before the records its header
// announces: capacity made room for as many as it can hold, so what is
// left is less than one record (need says so, in its words).
func (d *decoder) short(recordLen int, what string) error {
	if err := d.need(recordLen, what); err != nil {
		return err
	}
	return d.errorf("truncated: %s does not fit in the file", what)
}

// capacity bounds a slice preallocation by what the rest of the file can
// hold, so a header claiming billions of records allocates nothing big.
func (d *decoder) capacity(claimed uint32, recordLen int) int {
	fit := (len(d.data) - d.off) / recordLen
	if uint64(claimed) < uint64(fit) {
		return int(claimed)
	}
	return fit
}

func decode(data []byte, path string) (*discovery.Fabric, error) {
	d := &decoder{data: data, path: path, record: "header"}
	if err := d.need(headerLen, "the header"); err != nil {
		return nil, err
	}
	if magic := d.u32(); magic != Magic {
		return nil, d.errorf("bad magic 0x%08x, want 0x%08x: not a libibnetdisc cache file", magic, uint32(Magic))
	}
	if version := d.u32(); version != Version {
		d.recOff = 4
		return nil, d.errorf("unsupported cache version %d (only version %d exists)", version, Version)
	}
	nodeCount, portCount := d.u32(), d.u32()
	fromGUID := d.u64()
	maxHops := d.u32()

	// The records and the model's nodes and ports are allocated in one
	// slice each: a big cache has tens of thousands, and one allocation
	// apiece was most of the decoder's time.
	nodes := make([]*nodeRecord, 0, d.capacity(nodeCount, nodeFixedLen))
	nodeRecs := make([]nodeRecord, cap(nodes))
	nodeModels := make([]discovery.Node, cap(nodes))
	byNode := make(map[uint64]*nodeRecord, cap(nodes))
	for i := uint32(0); i < nodeCount; i++ {
		d.at("node record", i+1, nodeCount)
		if int(i) == len(nodeRecs) {
			return nil, d.short(nodeFixedLen, "a node record")
		}
		nr := &nodeRecs[i]
		if err := d.node(nr, &nodeModels[i]); err != nil {
			return nil, err
		}
		nr.idx = int(i) + 1
		if old := byNode[nr.node.GUID]; old != nil {
			return nil, d.errorf("node GUID 0x%016x appears twice (also node record %d at byte %d)", nr.node.GUID, old.idx, old.off)
		}
		byNode[nr.node.GUID] = nr
		nodes = append(nodes, nr)
	}

	ports := make([]*portRecord, 0, d.capacity(portCount, portRecordLen))
	portRecs := make([]portRecord, cap(ports))
	portModels := make([]discovery.Port, cap(ports))
	byPort := make(map[portKey]*portRecord, cap(ports))
	for i := uint32(0); i < portCount; i++ {
		d.at("port record", i+1, portCount)
		if int(i) == len(portRecs) {
			return nil, d.short(portRecordLen, "a port record")
		}
		pr := &portRecs[i]
		if err := d.port(pr, &portModels[i]); err != nil {
			return nil, err
		}
		pr.idx = int(i) + 1
		k := portKey{pr.port.GUID, uint8(pr.port.Num)}
		if old := byPort[k]; old != nil {
			return nil, d.errorf("port %v appears twice (also port record %d at byte %d)", k, old.idx, old.off)
		}
		byPort[k] = pr
		ports = append(ports, pr)
	}
	if extra := len(data) - d.off; extra > 0 {
		d.at("end of file", 0, 0)
		return nil, d.errorf("%d bytes after the last of the %d node and %d port records the header announces", extra, nodeCount, portCount)
	}

	from := byNode[fromGUID]
	if from == nil {
		d.record, d.recOf, d.recOff = "header", 0, 16
		return nil, d.errorf("the node discovery started from, 0x%016x, has no node record", fromGUID)
	}

	// Attach the ports to the nodes that list them.
	for _, nr := range nodes {
		n := nr.node
		for j, k := range nr.keys {
			rec := func() string { return fmt.Sprintf("node record %d of %d (0x%016x)", nr.idx, nodeCount, n.GUID) }
			pr := byPort[k]
			if pr == nil {
				return nil, d.errorAt(rec(), nr.off, "port key %d: %v has no port record", j+1, k)
			}
			if int(k.num) > n.NumPorts {
				return nil, d.errorAt(rec(), nr.off, "port key %d: port number %d is beyond the node's %d ports", j+1, k.num, n.NumPorts)
			}
			if pr.owner != nil {
				return nil, d.errorAt(rec(), nr.off, "port key %d: %v is already claimed by node record %d (0x%016x)", j+1, k, pr.owner.idx, pr.owner.node.GUID)
			}
			if old := n.Ports[k.num]; old != nil {
				return nil, d.errorAt(rec(), nr.off, "port key %d: two ports numbered %d (0x%016x and 0x%016x)", j+1, k.num, old.GUID, k.guid)
			}
			if pr.nodeGUID != n.GUID {
				return nil, d.errorAt(rec(), nr.off, "port key %d: port record %d (%v) names node 0x%016x as its owner", j+1, pr.idx, k, pr.nodeGUID)
			}
			pr.owner = nr
			pr.port.Node = n
			n.Ports[k.num] = pr.port
		}
	}
	// Resolve the links.
	for _, pr := range ports {
		rec := func() string {
			return fmt.Sprintf("port record %d of %d (%v)", pr.idx, portCount, portKey{pr.port.GUID, uint8(pr.port.Num)})
		}
		if pr.owner == nil {
			if byNode[pr.nodeGUID] == nil {
				return nil, d.errorAt(rec(), pr.off, "its node 0x%016x has no node record", pr.nodeGUID)
			}
			return nil, d.errorAt(rec(), pr.off, "its node 0x%016x does not list it among its ports", pr.nodeGUID)
		}
		if !pr.hasRemote {
			continue
		}
		rp := byPort[pr.remote]
		if rp == nil {
			return nil, d.errorAt(rec(), pr.off, "remote port %v has no port record", pr.remote)
		}
		pr.port.Remote = rp.port
	}

	f := discovery.NewFabric()
	f.MaxHops = int(maxHops)
	// The file lists nodes newest first; the model keeps discovery order.
	for i := len(nodes) - 1; i >= 0; i-- {
		f.AddNode(nodes[i].node)
	}
	f.From = from.node
	return f, nil
}

// node reads a node record into nr and n.
func (d *decoder) node(nr *nodeRecord, n *discovery.Node) error {
	if err := d.need(nodeFixedLen, "a node record"); err != nil {
		return err
	}
	nr.off = d.off
	n.SMALID = d.u16()
	n.SMALMC = d.u8()
	n.EnhancedSP0 = d.u8() != 0
	n.SwitchInfo = d.blob()
	n.GUID = d.u64()
	n.Type = int(d.u8())
	n.NumPorts = int(d.u8())
	n.NodeInfo = d.blob()
	n.NodeDesc = d.blob()
	stored := int(d.u8())
	if n.Type != discovery.NodeSwitch && allZero(n.SwitchInfo) {
		n.SwitchInfo = nil
	}
	if err := d.need(stored*portKeyLen, fmt.Sprintf("its %d port keys", stored)); err != nil {
		return err
	}
	nr.keys = make([]portKey, stored)
	for i := range nr.keys {
		nr.keys[i].guid = d.u64()
		nr.keys[i].num = d.u8()
	}
	n.Ports = make([]*discovery.Port, n.NumPorts+1)
	nr.node = n
	return nil
}

// port reads a port record into pr and p.
func (d *decoder) port(pr *portRecord, p *discovery.Port) error {
	if err := d.need(portRecordLen, "a port record"); err != nil {
		return err
	}
	pr.off = d.off
	p.GUID = d.u64()
	p.Num = int(d.u8())
	p.ExtNum = int(d.u8())
	p.BaseLID = d.u16()
	p.LMC = d.u8()
	p.PortInfo = d.blob()
	pr.nodeGUID = d.u64()
	pr.hasRemote = d.u8() != 0
	pr.remote.guid = d.u64()
	pr.remote.num = d.u8()
	pr.port = p
	return nil
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}
