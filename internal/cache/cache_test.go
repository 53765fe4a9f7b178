package cache

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/ibtool/ibtool/internal/atomicfile"
	"github.com/ibtool/ibtool/internal/discovery"
)

// Caches written by ibnetdiscover 44 (infiniband-diags 44.0) on the
// simulator: tiny.net and ibsim-2sw2path4hca2port.net.
var goldenCaches = []string{"testdata/tiny.cache", "testdata/2sw2path4hca2port.cache"}

func readGolden(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func blob(fill byte, guidAt int, guid uint64) []byte {
	b := bytes.Repeat([]byte{fill}, blobLen)
	if guidAt >= 0 {
		binary.BigEndian.PutUint64(b[guidAt:], guid)
	}
	return b
}

// testFabric is a switch with two CAs: S (4 ports) links port 1 to A port
// 1 and port 3 to B port 1; A's port 2 is known but unconnected.
func testFabric() *discovery.Fabric {
	f := discovery.NewFabric()
	node := func(guid uint64, typ, ports int, desc string, path ...byte) *discovery.Node {
		n := &discovery.Node{GUID: guid, Type: typ, NumPorts: ports, NodeInfo: blob(byte(typ), 12, guid),
			NodeDesc: append([]byte(desc), make([]byte, blobLen-len(desc))...), DRPath: path}
		if typ == discovery.NodeSwitch {
			n.SwitchInfo, n.SMALID, n.SMALMC, n.EnhancedSP0 = blob(0x5a, -1, 0), 1, 0, true
		}
		return f.AddNode(n)
	}
	port := func(n *discovery.Node, num int, guid uint64, lid uint16) *discovery.Port {
		p := &discovery.Port{Node: n, GUID: guid, Num: num, BaseLID: lid, PortInfo: blob(byte(num), -1, 0)}
		n.Ports[num] = p
		return p
	}
	s := node(0x0002c90000000100, discovery.NodeSwitch, 4, "switch S", 0)
	a := node(0x0002c90000000200, discovery.NodeCA, 2, "ca A", 0, 1)
	b := node(0x0002c90000000300, discovery.NodeCA, 1, "ca B", 0, 3)
	for i := 0; i <= 4; i++ {
		port(s, i, s.GUID, 1)
	}
	discovery.Link(s.Ports[1], port(a, 1, 0x0002c90000000201, 2))
	port(a, 2, 0x0002c90000000202, 0)
	discovery.Link(s.Ports[3], port(b, 1, 0x0002c90000000301, 3))
	f.From, f.MaxHops = s, 1
	return f
}

func encode(t testing.TB, f *discovery.Fabric) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := Encode(&b, f); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func mustDecode(t testing.TB, data []byte) *discovery.Fabric {
	t.Helper()
	f, err := Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// recordOffsets walks a well-formed file independently of the decoder and
// returns where each node and port record starts.
func recordOffsets(data []byte) (nodes, ports []int) {
	nn := binary.LittleEndian.Uint32(data[8:])
	np := binary.LittleEndian.Uint32(data[12:])
	off := headerLen
	for i := uint32(0); i < nn; i++ {
		nodes = append(nodes, off)
		off += nodeFixedLen + int(data[off+nodeFixedLen-1])*portKeyLen
	}
	for i := uint32(0); i < np; i++ {
		ports = append(ports, off)
		off += portRecordLen
	}
	return nodes, ports
}

// Offsets of fields inside records.
const (
	nodeGUIDAt     = 2 + 1 + 1 + blobLen // in a node record
	nodeNumPortsAt = nodeGUIDAt + 8 + 1
	nodeKeysAt     = nodeFixedLen // first port key
	portNumAt      = 8            // in a port record
	portNodeAt     = 8 + 1 + 1 + 2 + 1 + blobLen
	portRemoteAt   = portNodeAt + 8 // flag, GUID, number
)

// sameFabric compares two models field by field (pointers by identity of
// what they point to: node GUID and port number).
func sameFabric(t *testing.T, want, got *discovery.Fabric) {
	t.Helper()
	if got.MaxHops != want.MaxHops || got.From.GUID != want.From.GUID || len(got.Nodes) != len(want.Nodes) {
		t.Fatalf("fabric: got maxhops %d from 0x%x %d nodes, want %d 0x%x %d", got.MaxHops, got.From.GUID, len(got.Nodes), want.MaxHops, want.From.GUID, len(want.Nodes))
	}
	for i, wn := range want.Nodes {
		gn := got.Nodes[i]
		wc, gc := *wn, *gn
		wc.Ports, gc.Ports = nil, nil
		if !reflect.DeepEqual(wc, gc) {
			t.Errorf("node %d:\n got %+v\nwant %+v", i, gc, wc)
		}
		if len(gn.Ports) != wn.NumPorts+1 {
			t.Errorf("node 0x%x: %d port slots", gn.GUID, len(gn.Ports))
		}
		for num := 0; num <= wn.NumPorts; num++ {
			wp, gp := wn.Port(num), gn.Port(num)
			if (wp == nil) != (gp == nil) {
				t.Errorf("node 0x%x port %d: got %v want %v", wn.GUID, num, gp, wp)
				continue
			}
			if wp == nil {
				continue
			}
			if gp.Node != gn || gp.GUID != wp.GUID || gp.Num != wp.Num || gp.ExtNum != wp.ExtNum ||
				gp.BaseLID != wp.BaseLID || gp.LMC != wp.LMC || !bytes.Equal(gp.PortInfo, wp.PortInfo) ||
				(gp.PortInfo == nil) != (wp.PortInfo == nil) {
				t.Errorf("node 0x%x port %d: got %+v want %+v", wn.GUID, num, gp, wp)
			}
			if (wp.Remote == nil) != (gp.Remote == nil) ||
				wp.Remote != nil && (gp.Remote.Node.GUID != wp.Remote.Node.GUID || gp.Remote.Num != wp.Remote.Num) {
				t.Errorf("node 0x%x port %d: remote %v, want %v", wn.GUID, num, gp.Remote, wp.Remote)
			}
		}
	}
}

func TestGoldenRoundTrip(t *testing.T) {
	for _, name := range goldenCaches {
		data := readGolden(t, name)
		f := mustDecode(t, data)
		if got := encode(t, f); !bytes.Equal(got, data) {
			t.Errorf("%s: Encode(Decode(x)) differs from x (%d bytes, want %d)", name, len(got), len(data))
		}
		// Through the file functions too, without a companion.
		path := filepath.Join(t.TempDir(), "c")
		if err := Write(path, f); err != nil {
			t.Fatal(err)
		}
		if got, _ := os.ReadFile(path); !bytes.Equal(got, data) {
			t.Errorf("%s: Write changed the bytes", name)
		}
		if _, err := os.Stat(path + CompanionSuffix); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: a companion was written for a fabric without DR paths: %v", name, err)
		}
		g, err := Read(path)
		if err != nil {
			t.Fatal(err)
		}
		sameFabric(t, f, g)
	}
}

func TestGoldenContents(t *testing.T) {
	f := mustDecode(t, readGolden(t, "testdata/tiny.cache"))
	// tiny.net: Switch1 (8 ports) is where discovery started.
	if f.From != f.Nodes[0] || f.From.Desc() != "Switch1" || f.From.GUID != 0x200000 {
		t.Fatalf("from node %q 0x%x, first node %q", f.From.Desc(), f.From.GUID, f.Nodes[0].Desc())
	}
	var descs []string
	for _, n := range f.Nodes {
		descs = append(descs, n.Desc())
		if uint64(n.Info().NodeGUID) != n.GUID {
			t.Errorf("%s: NodeInfo GUID 0x%x, node GUID 0x%x", n.Desc(), n.Info().NodeGUID, n.GUID)
		}
		if (n.SwitchInfo != nil) != (n.Type == discovery.NodeSwitch) || len(n.DRPath) != 0 {
			t.Errorf("%s: SwitchInfo %v, DR path %v", n.Desc(), n.SwitchInfo != nil, n.DRPath)
		}
	}
	// Discovery order: breadth first from Switch1.
	if got, want := strings.Join(descs, ","), "Switch1,hca one,Hca2,sw2 desc,Hca3"; got != want {
		t.Errorf("nodes %s, want %s", got, want)
	}
	sw2 := f.Node(0x200001)
	if sw2.SMALID != 7 || !sw2.EnhancedSP0 || sw2.Ports[4].Remote != f.From.Ports[8] || f.From.Ports[8].Remote != sw2.Ports[4] {
		t.Errorf("Switch2: lid %d esp0 %v, link to Switch1 port 8 missing", sw2.SMALID, sw2.EnhancedSP0)
	}
	hca2 := f.Node(0x100003)
	if hca2.Ports[2] != nil || hca2.Ports[1].GUID != 0x100004 || hca2.Ports[1].BaseLID != 3 {
		t.Errorf("Hca2 ports: %+v", hca2.Ports)
	}
}

func TestSyntheticRoundTrip(t *testing.T) {
	f := testFabric()
	data := encode(t, f)
	g := mustDecode(t, data)
	// The main file has no DR paths.
	for _, n := range f.Nodes {
		n.DRPath = nil
	}
	sameFabric(t, f, g)
	if again := encode(t, g); !bytes.Equal(again, data) {
		t.Error("Encode(Decode(Encode(f))) != Encode(f)")
	}
	// Port record order: buckets of HashGUID % 137, nodes in file order,
	// port numbers descending.
	_, ports := recordOffsets(data)
	prev := -1
	for i, off := range ports {
		guid := binary.LittleEndian.Uint64(data[off:])
		b := int(HashGUID(guid) % hashSize)
		if b < prev {
			t.Errorf("port record %d in bucket %d after bucket %d", i+1, b, prev)
		}
		prev = b
	}
}

func TestHashGUID(t *testing.T) {
	for _, c := range []struct {
		guid uint64
		want uint32
	}{
		{0, 0},
		{1, 101},
		{1 << 32, 103},
		{0x0002c90300000001, uint32(1*101) ^ uint32(0x0002c903*103)},
		{0xffffffffffffffff, (0xffffffff * 101 & 0xffffffff) ^ (0xffffffff * 103 & 0xffffffff)},
	} {
		if got := HashGUID(c.guid); got != c.want {
			t.Errorf("HashGUID(0x%x) = %d, want %d", c.guid, got, c.want)
		}
	}
}

// Every proper prefix of a valid file is an error (never a panic), one
// line long, naming a record and offset.
func TestTruncatedAtEveryOffset(t *testing.T) {
	for _, name := range goldenCaches {
		data := readGolden(t, name)
		for n := 0; n < len(data); n++ {
			_, err := Decode(bytes.NewReader(data[:n]))
			var fe *FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("%s cut at %d: %v, want a FormatError", name, n, err)
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") || !strings.Contains(msg, " at byte ") || fe.Offset > int64(n) {
				t.Fatalf("%s cut at %d: bad message %q", name, n, msg)
			}
			if !strings.Contains(msg, "truncated") {
				t.Fatalf("%s cut at %d: %q does not say truncated", name, n, msg)
			}
		}
	}
	// A sample of the wording.
	data := readGolden(t, "testdata/tiny.cache")
	_, err := Decode(bytes.NewReader(data[:headerLen+100]))
	if want := "cache: node record 1 of 5 at byte 28: truncated: a node record needs 207 bytes, the file ends 100 bytes later (file size 128)"; err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
}

func TestMalformed(t *testing.T) {
	base := encode(t, testFabric())
	nodes, ports := recordOffsets(base)
	// Node records are newest first: B, A, S. Ports of S first (bucket order
	// is checked elsewhere); find records by content.
	nodeAt := func(guid uint64) int {
		for _, off := range nodes {
			if binary.LittleEndian.Uint64(base[off+nodeGUIDAt:]) == guid {
				return off
			}
		}
		t.Fatalf("no node 0x%x", guid)
		return 0
	}
	portAt := func(guid uint64, num byte) int {
		for _, off := range ports {
			if binary.LittleEndian.Uint64(base[off:]) == guid && base[off+portNumAt] == num {
				return off
			}
		}
		t.Fatalf("no port 0x%x/%d", guid, num)
		return 0
	}
	const s, a, b = 0x0002c90000000100, 0x0002c90000000200, 0x0002c90000000300
	cases := []struct {
		name   string
		mutate func(d []byte) []byte
		want   string
	}{
		{"bad magic", func(d []byte) []byte { d[0] = 0; return d },
			"cache: header at byte 0: bad magic 0x8fe78300, want 0x8fe7832b: not a libibnetdisc cache file"},
		{"bad version", func(d []byte) []byte { d[4] = 2; return d },
			"cache: header at byte 4: unsupported cache version 2 (only version 1 exists)"},
		{"empty", func(d []byte) []byte { return nil },
			"cache: header at byte 0: truncated: the header needs 28 bytes, the file ends 0 bytes later (file size 0)"},
		{"remote port missing", func(d []byte) []byte {
			off := portAt(a+1, 1) + portRemoteAt + 1
			binary.LittleEndian.PutUint64(d[off:], 0xdead)
			return d
		}, "remote port 0x000000000000dead port 1 has no port record"},
		{"remote port number missing", func(d []byte) []byte {
			d[portAt(s, 3)+portRemoteAt+9] = 7
			return d
		}, "remote port 0x0002c90000000301 port 7 has no port record"},
		{"port number beyond numports", func(d []byte) []byte { d[nodeAt(a)+nodeNumPortsAt] = 1; return d },
			"port key 2: port number 2 is beyond the node's 1 ports"},
		{"port claimed twice", func(d []byte) []byte {
			// A's second key names its port 1 again.
			off := nodeAt(a) + nodeKeysAt + portKeyLen
			binary.LittleEndian.PutUint64(d[off:], a+1)
			d[off+8] = 1
			return d
		}, "node record 2 of 3 (0x0002c90000000200) at byte 244: port key 2: 0x0002c90000000201 port 1 is already claimed by node record 2 (0x0002c90000000200)"},
		{"port claimed by another node", func(d []byte) []byte {
			binary.LittleEndian.PutUint64(d[nodeAt(b)+nodeKeysAt:], a+1)
			return d
		}, "port key 1: port record 2 (0x0002c90000000201 port 1) names node 0x0002c90000000200 as its owner"},
		{"key without port record", func(d []byte) []byte {
			binary.LittleEndian.PutUint64(d[nodeAt(b)+nodeKeysAt:], 0xbeef)
			return d
		}, "node record 1 of 3 (0x0002c90000000300) at byte 28: port key 1: 0x000000000000beef port 1 has no port record"},
		{"port record of another node", func(d []byte) []byte {
			binary.LittleEndian.PutUint64(d[portAt(b+1, 1)+portNodeAt:], a)
			return d
		}, "names node 0x0002c90000000200 as its owner"},
		{"from node missing", func(d []byte) []byte { binary.LittleEndian.PutUint64(d[16:], 42); return d },
			"cache: header at byte 16: the node discovery started from, 0x000000000000002a, has no node record"},
		{"duplicate node", func(d []byte) []byte {
			binary.LittleEndian.PutUint64(d[nodeAt(b)+nodeGUIDAt:], a)
			return d
		}, "node record 2 of 3 at byte"},
		{"duplicate port record", func(d []byte) []byte {
			off := portAt(s, 2)
			d[off+portNumAt] = 1
			return d
		}, "port 0x0002c90000000100 port 1 appears twice"},
		{"trailing bytes", func(d []byte) []byte { return append(d, 0) },
			"end of file at byte " + strconv.Itoa(len(base)) + ": 1 bytes after the last of the 3 node and 8 port records the header announces"},
		{"too few port records", func(d []byte) []byte { d[12]--; return d },
			"95 bytes after the last of the 3 node and 7 port records"},
		{"huge counts", func(d []byte) []byte {
			binary.LittleEndian.PutUint32(d[8:], 0xffffffff)
			return d
		}, "truncated: a node record needs 207 bytes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := c.mutate(append([]byte(nil), base...))
			_, err := Decode(bytes.NewReader(d))
			var fe *FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("got %v, want a FormatError", err)
			}
			if !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("got  %s\nwant ...%s...", err, c.want)
			}
		})
	}
}

// A header announcing 4 billion nodes and ports allocates nothing big.
func TestHugeCountsDoNotAllocate(t *testing.T) {
	data := readGolden(t, "testdata/tiny.cache")
	data = append([]byte(nil), data...)
	binary.LittleEndian.PutUint32(data[8:], 0xffffffff)
	binary.LittleEndian.PutUint32(data[12:], 0xffffffff)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := Decode(bytes.NewReader(data))
	runtime.ReadMemStats(&after)
	if err == nil {
		t.Fatal("no error")
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<20 {
		t.Errorf("decoding a %d-byte file allocated %d bytes", len(data), grew)
	}
}

func TestWriterRule(t *testing.T) {
	f := testFabric()
	s := f.From
	// A link to a port that no node holds is not written: every reference
	// in the file must resolve.
	stray := &discovery.Port{GUID: 0x77, Num: 1, PortInfo: blob(1, -1, 0)}
	discovery.Link(s.Ports[4], stray)
	g := mustDecode(t, encode(t, f))
	if r := g.Node(s.GUID).Ports[4].Remote; r != nil {
		t.Errorf("link to an unwritten port kept: %+v", r)
	}
	// A port without PortInfo is written with zeros (its link kept).
	a := f.Node(0x0002c90000000200)
	a.Ports[1].PortInfo = nil
	g = mustDecode(t, encode(t, f))
	if p := g.Node(a.GUID).Ports[1]; !allZero(p.PortInfo) || len(p.PortInfo) != blobLen || p.Remote == nil {
		t.Errorf("port without PortInfo: %+v", p)
	}
	// Port records carry their node's GUID even when Port.Node is unset.
	a.Ports[2].Node = nil
	g = mustDecode(t, encode(t, f))
	if p := g.Node(a.GUID).Ports[2]; p == nil || p.Node.GUID != a.GUID {
		t.Errorf("port without Node: %+v", p)
	}
}

func TestWriteRejects(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(f *discovery.Fabric)
		want   string
	}{
		{"no from", func(f *discovery.Fabric) { f.From = nil }, "no From node"},
		{"from elsewhere", func(f *discovery.Fabric) { f.From = &discovery.Node{GUID: 9} }, "From node 0x0000000000000009 is not among"},
		{"port on two nodes", func(f *discovery.Fabric) {
			f.Node(0x0002c90000000300).Ports[1].GUID = 0x0002c90000000201
		}, "port GUID 0x0002c90000000201 port 1 is on two nodes"},
		{"wrong number", func(f *discovery.Fabric) { f.From.Ports[2].Num = 3 }, "Ports[2] says it is port 3"},
		{"beyond numports", func(f *discovery.Fabric) { f.From.NumPorts = 3 }, "port 4 is beyond its 3 ports"},
		{"long blob", func(f *discovery.Fabric) { f.From.NodeDesc = make([]byte, 65) }, "NodeDescription is 65 bytes"},
		{"other node's port", func(f *discovery.Fabric) { f.From.Ports[2].Node = f.Nodes[1] }, "port 2 belongs to node"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := testFabric()
			c.mutate(f)
			var b bytes.Buffer
			err := Encode(&b, f)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want %q", err, c.want)
			}
			if b.Len() != 0 {
				t.Errorf("%d bytes written before the error", b.Len())
			}
			// And Write leaves nothing behind.
			dir := t.TempDir()
			if err := Write(filepath.Join(dir, "c"), f); err == nil {
				t.Fatal("Write succeeded")
			}
			if ents, _ := os.ReadDir(dir); len(ents) != 0 {
				t.Errorf("left behind: %v", ents)
			}
		})
	}
}

func TestWriteTooManyPorts(t *testing.T) {
	f := discovery.NewFabric()
	n := f.AddNode(&discovery.Node{GUID: 1, Type: discovery.NodeSwitch, NumPorts: 255})
	for i := range n.Ports {
		n.Ports[i] = &discovery.Port{Node: n, GUID: 1, Num: i}
	}
	f.From = n
	if err := Encode(&bytes.Buffer{}, f); err == nil || !strings.Contains(err.Error(), "has 256 ports; the format stores at most 255") {
		t.Errorf("got %v", err)
	}
}

func TestWriteAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "fabric.cache")
	old := readGolden(t, "testdata/tiny.cache")
	if err := os.WriteFile(path, old, 0o600); err != nil {
		t.Fatal(err)
	}
	// A failed write leaves the old file alone.
	bad := testFabric()
	bad.From = nil
	if err := Write(path, bad); err == nil {
		t.Fatal("no error")
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, old) {
		t.Error("failed write changed the file")
	}
	// A good one replaces it, 0644 minus the umask, no temp files left.
	f := mustDecode(t, readGolden(t, "testdata/2sw2path4hca2port.cache"))
	if err := Write(path, f); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, readGolden(t, "testdata/2sw2path4hca2port.cache")) {
		t.Error("file not replaced")
	}
	st, _ := os.Stat(path)
	if want := os.FileMode(0o644) &^ atomicfile.Umask(); st.Mode().Perm() != want {
		t.Errorf("mode %v, want %v", st.Mode().Perm(), want)
	}
	// A rename that fails (the target is a directory) leaves no temp file.
	target := filepath.Join(dir, "isadir")
	if err := os.MkdirAll(filepath.Join(target, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := Write(target, testFabric()); err == nil {
		t.Error("writing over a directory succeeded")
	}
	ents, _ := os.ReadDir(dir)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if got := strings.Join(names, " "); got != "fabric.cache isadir" {
		t.Errorf("directory holds %s", got)
	}
	// A directory that does not exist: an error, nothing created.
	if err := Write(filepath.Join(dir, "no", "such"), f); err == nil {
		t.Error("no error for a missing directory")
	}
}

func TestCompanion(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "c")
	f := testFabric()
	a := f.Node(0x0002c90000000200)
	a.Ports[2].PortInfo = nil
	f.From.SwitchInfo = nil
	a.NodeDesc = nil
	f.Errors = []*discovery.WalkError{{DRPath: []byte{0, 3}, What: "PortInfo port 2", Err: errors.New("timeout")}}
	if err := Write(path, f); err != nil {
		t.Fatal(err)
	}
	main, _ := os.ReadFile(path)
	if !bytes.Equal(main, encode(t, f)) {
		t.Error("the main file differs from Encode's")
	}
	extra, err := os.ReadFile(path + CompanionSuffix)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"format": "ibtool-cache-companion"`, `"dr_path": "0,1"`, `"ports_without_portinfo": [`, `"missing": [`, `"walk_errors"`} {
		if !bytes.Contains(extra, []byte(want)) {
			t.Errorf("companion lacks %s:\n%s", want, extra)
		}
	}
	g, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	sameFabric(t, f, g)
	if len(g.Errors) != 1 || g.Errors[0].Error() != f.Errors[0].Error() {
		t.Errorf("walk errors %v", g.Errors)
	}

	// Without the companion the cache loads as libibnetdisc loads it.
	if err := os.Rename(path+CompanionSuffix, path+".saved"); err != nil {
		t.Fatal(err)
	}
	g, err = Read(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range g.Nodes {
		if len(n.DRPath) != 0 {
			t.Errorf("node 0x%x: DR path %v without a companion", n.GUID, n.DRPath)
		}
	}
	if p := g.Node(a.GUID).Ports[2]; len(p.PortInfo) != blobLen || g.Errors != nil {
		t.Errorf("without companion: PortInfo %v, errors %v", p.PortInfo, g.Errors)
	}

	// A companion for another main file (the cache was rewritten by a C
	// tool) is ignored.
	if err := os.Rename(path+".saved", path+CompanionSuffix); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, readGolden(t, "testdata/tiny.cache"), 0o644); err != nil {
		t.Fatal(err)
	}
	g, err = Read(path)
	if err != nil || g.Nodes[0].DRPath != nil {
		t.Errorf("stale companion: %v, %v", err, g)
	}
	// A companion that belongs to the file but is corrupt is an error.
	if err := Write(path, f); err != nil {
		t.Fatal(err)
	}
	extra, _ = os.ReadFile(path + CompanionSuffix)
	bad := bytes.Replace(extra, []byte(`"dr_path": "0,1"`), []byte(`"dr_path": "0,x"`), 1)
	os.WriteFile(path+CompanionSuffix, bad, 0o644)
	if _, err := Read(path); err == nil || !strings.Contains(err.Error(), `bad DR path "0,x"`) {
		t.Errorf("corrupt companion: %v", err)
	}
	os.WriteFile(path+CompanionSuffix, []byte("{"), 0o644)
	if _, err := Read(path); err == nil || !strings.Contains(err.Error(), "remove it") {
		t.Errorf("unparsable companion: %v", err)
	}
	// Writing a fabric with nothing extra removes the old companion.
	if err := Write(path, mustDecode(t, main)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path + CompanionSuffix); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("stale companion kept: %v", err)
	}
}

func TestReadMissingFile(t *testing.T) {
	_, err := Read(filepath.Join(t.TempDir(), "none"))
	if err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("got %v", err)
	}
}

func TestExpandName(t *testing.T) {
	// Expected values from Python's string.Template(name).safe_substitute,
	// as python-rdma uses it.
	for _, c := range []struct{ in, want string }{
		{"~/.ibtools.cache-$A", "~/.ibtools.cache-mlx5_0-1"},
		{"x-$C-$P", "x-mlx5_0-1"},
		{"${CA}/${PORT}", "mlx5_0/1"},
		{"$CA$PORT", "mlx5_01"},
		{"${C}${P}", "mlx5_01"},
		{"$$A", "$A"},
		{"$$$A", "$mlx5_0-1"},
		{"$", "$"},
		{"a$", "a$"},
		{"$1", "$1"},
		{"${", "${"},
		{"${A", "${A"},
		{"${A}x", "mlx5_0-1x"},
		{"$Ax", "$Ax"},
		{"$A_1", "$A_1"},
		{"$A-1", "mlx5_0-1-1"},
		{"$c", "$c"},
		{"${}", "${}"},
		{"${HOME}", "${HOME}"},
		{"$HOME/c", "$HOME/c"},
		{"$ A", "$ A"},
		{"p$P.q", "p1.q"},
		{"$C$", "mlx5_0$"},
		{"${ A}", "${ A}"},
		{"$é", "$é"},
		{"plain", "plain"},
	} {
		if got := ExpandName(c.in, "mlx5_0", 1); got != c.want {
			t.Errorf("ExpandName(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// A companion that belongs to its cache but is not a sound document is
// refused, one line naming what is wrong: not an object (null as much as
// []), a route longer than IBA's 63 hops, a node listed twice, two nodes
// at the end of one route.
func TestCompanionRefusesWhatCannotBe(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c")
	f := testFabric()
	f.Errors = []*discovery.WalkError{{DRPath: []byte{0, 3}, What: "PortInfo port 2", Err: errors.New("timeout")}}
	if err := Write(path, f); err != nil {
		t.Fatal(err)
	}
	good, _ := os.ReadFile(path + CompanionSuffix)
	long := "0" + strings.Repeat(",1", 101)
	for _, tc := range []struct {
		name string
		edit func(doc map[string]any) any
		want string
	}{
		{"null", func(map[string]any) any { return nil }, "not a JSON object"},
		{"[]", func(map[string]any) any { return []any{} }, "not a JSON object"},
		{"101 hops", func(doc map[string]any) any {
			nodes(doc)[1]["dr_path"] = long
			return doc
		}, "node 2 (0x0002c90000000200): bad DR path of 101 hops: at most 63"},
		{"walk error of 101 hops", func(doc map[string]any) any {
			doc["walk_errors"].([]any)[0].(map[string]any)["dr_path"] = long
			return doc
		}, "bad DR path of 101 hops"},
		{"twice", func(doc map[string]any) any {
			doc["nodes"] = append(doc["nodes"].([]any), nodes(doc)[1])
			return doc
		}, "node 4 (0x0002c90000000200): listed twice (also node 2)"},
		{"shared route", func(doc map[string]any) any {
			nodes(doc)[2]["dr_path"] = nodes(doc)[1]["dr_path"]
			return doc
		}, "node 3 (0x0002c90000000300): DR path 0,1 leads to node 2 too"},
	} {
		var doc map[string]any
		if err := json.Unmarshal(good, &doc); err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(tc.edit(doc))
		os.WriteFile(path+CompanionSuffix, b, 0o644)
		_, err := Read(path)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v; want %q", tc.name, err, tc.want)
		}
	}
	os.WriteFile(path+CompanionSuffix, good, 0o644)
	if _, err := Read(path); err != nil {
		t.Fatalf("the companion as written: %v", err)
	}
}

func nodes(doc map[string]any) []map[string]any {
	var out []map[string]any
	for _, n := range doc["nodes"].([]any) {
		out = append(out, n.(map[string]any))
	}
	return out
}
