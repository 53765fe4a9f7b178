package render

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/ibtool/ibtool/internal/routing"
)

func TestUnicastRangeLeavesATopsOwnBlockUnreadAtAMultipleOf64(t *testing.T) {
	for _, tc := range []struct {
		start, end, top int
		first, last     int
		blocks          routing.Range
		warn            bool
	}{
		{0, 0, 63, 0, 63, routing.Range{First: 0, End: 1}, false},
		{0, 0, 64, 0, 64, routing.Range{First: 0, End: 1}, false}, // LID 64's block is not read
		{0, 0, 65, 0, 65, routing.Range{First: 0, End: 2}, false},
		{0x10, 0x20, 200, 0x10, 0x20, routing.Range{First: 0, End: 1}, false},
		{100, 0, 300, 100, 300, routing.Range{First: 1, End: 5}, false},
		{0, 0, 0xC000, 0, 0xBFFF, routing.Range{First: 0, End: 0x300}, true},
	} {
		first, last, blocks, warn := UnicastRange(tc.start, tc.end, tc.top)
		if first != tc.first || last != tc.last || blocks != tc.blocks || (warn != "") != tc.warn {
			t.Errorf("UnicastRange(%d, %d, %d) = %d, %d, %v, %q; want %d, %d, %v, warning %v",
				tc.start, tc.end, tc.top, first, last, blocks, warn, tc.first, tc.last, tc.blocks, tc.warn)
		}
	}
}

func TestMulticastRange(t *testing.T) {
	first, last, warns := MulticastRange(0, 0, 64, 0xC010, false)
	if first != 0xC000 || last != 0xC010 || warns != nil {
		t.Errorf("up to the top: %#x %#x %v", first, last, warns)
	}
	first, last, _ = MulticastRange(0, 0, 64, 0xC010, true) // -a: the capacity
	if first != 0xC000 || last != 0xC03F {
		t.Errorf("-a: %#x %#x", first, last)
	}
	_, _, warns = MulticastRange(0x10, 0, 64, 0x10, false)
	if len(warns) != 2 || !strings.Contains(warns[0], "illegal top mlid 10") || !strings.Contains(warns[1], "illegal start mlid 10") {
		t.Errorf("warnings: %q", warns)
	}
	if r := MLIDBlocks(0xC005, 0xC021); r != (routing.Range{First: 0xC000, End: 0xC040}) {
		t.Errorf("MLIDBlocks: %v", r)
	}
	if r := MLIDBlocks(0xC005, 0xC004); !r.Empty() || r == (routing.Range{}) {
		t.Errorf("MLIDBlocks of nothing: %v (empty, and not the default)", r)
	}
}

// lftSwitch is an 8-port switch whose table covers blocks blocks, LID l
// going out of port l%8+1, the failed blocks unread.
func lftSwitch(blocks int, failed ...int) *routing.Switch {
	lft := &routing.LFT{Ports: make([]byte, blocks*routing.LIDsPerBlock)}
	for i := range lft.Ports {
		lft.Ports[i] = byte(i%8 + 1)
	}
	for _, b := range failed {
		lft.Failed = append(lft.Failed, routing.BlockError{Block: b, Mod: uint32(b), Err: errors.New("timeout")})
		for i := range routing.LIDsPerBlock {
			lft.Ports[b*routing.LIDsPerBlock+i] = routing.NoPort
		}
	}
	return &routing.Switch{NumPorts: 8, LFT: lft}
}

func TestUnicastTableShowsTheBlockBeforeAFailedOne(t *testing.T) {
	sw := lftSwitch(3, 1)
	tab, failed, truncated := UnicastTable(sw, 10, 150, false)
	if truncated || len(failed) != 1 || failed[0].Block != 1 || tab.First != 10 || len(tab.Ports) != 141 {
		t.Fatalf("first %d, %d LIDs, failed %v, truncated %v", tab.First, len(tab.Ports), failed, truncated)
	}
	for lid := 64; lid < 128; lid++ { // block 1 shows block 0
		if got, want := tab.Ports[lid-10], byte(lid%8+1); got != want {
			t.Fatalf("LID %d: port %d, want block 0's %d", lid, got, want)
		}
	}
	// ibroute stops at the failed block.
	tab, failed, truncated = UnicastTable(sw, 0, 191, true)
	if !truncated || len(failed) != 1 || len(tab.Ports) != 64 {
		t.Errorf("stop: %d LIDs, failed %v, truncated %v", len(tab.Ports), failed, truncated)
	}
	// Before the first block read, the buffer holds zeros: port 0.
	tab, _, _ = UnicastTable(lftSwitch(2, 0), 0, 127, false)
	if tab.Ports[5] != 0 || tab.Ports[70] != 7 || tab.Shown() != 128 {
		t.Errorf("a failed first block: %v", tab.Ports[:8])
	}
}

func TestMulticastTableKeepsEachChunksBuffer(t *testing.T) {
	// A 20-port switch: two chunks per MLID, two blocks of 32 MLIDs.
	m := &routing.MFT{First: routing.MinMLID, Chunks: 2, Masks: make([]uint16, 64*2)}
	for i := range 64 {
		m.Masks[2*i] = uint16(i + 1)       // ports 0..15
		m.Masks[2*i+1] = uint16(0x100 + i) // ports 16..
		if i >= 32 && i%2 == 0 {
			m.Masks[2*i], m.Masks[2*i+1] = 0, 0
		}
	}
	m.Failed = []routing.BlockError{{Block: 1, Chunk: 1, Mod: 1 | 1<<28, Err: errors.New("timeout")}}
	for i := 32; i < 64; i++ {
		m.Masks[2*i+1] = 0
	}
	sw := &routing.Switch{NumPorts: 20, MFT: m}
	entries, failed, truncated := MulticastTable(sw, 0xC000, 0xC03F, true, false)
	if truncated || len(failed) != 1 || len(entries) != 64 {
		t.Fatalf("%d entries, failed %v, truncated %v", len(entries), failed, truncated)
	}
	e := entries[33] // MLID 0xC021: its own chunk 0, block 0's chunk 1
	if !slices.Equal(e.masks, []uint16{34, 0x101}) {
		t.Errorf("MLID %#x: masks %#x", e.MLID, e.masks)
	}
	if !slices.Equal(e.Ports, []int{1, 5, 16}) { // 34 = ports 1 and 5; 0x101 = ports 16 and 24, past 20
		t.Errorf("MLID %#x: ports %v", e.MLID, e.Ports)
	}
	// Without -a an MLID is shown when a chunk has a port: 0xC020's
	// chunk 0 is empty, its stale chunk 1 is not.
	entries, _, _ = MulticastTable(sw, 0xC020, 0xC021, false, false)
	if len(entries) != 2 || entries[0].MLID != 0xC020 {
		t.Errorf("without -a: %+v", entries)
	}
	entries, failed, truncated = MulticastTable(sw, 0xC000, 0xC03F, false, true)
	if !truncated || len(failed) != 1 || len(entries) != 32 {
		t.Errorf("stop: %d entries, failed %v, truncated %v", len(entries), failed, truncated)
	}
}

func TestLIDDescriberNamesAnLMCRangeOnce(t *testing.T) {
	host := &Dest{PortGUID: 0x10, NodeType: 1, Port: 1, BaseLID: 4, LMC: 2, Name: "host"}
	dests := &Dests{ByLID: []*Dest{4: host, 5: host, 6: host, 7: host, 8: nil}, Unknown: ": (unknown)"}
	d := &LIDDescriber{Dests: dests}
	var got []string
	for _, e := range []struct {
		lid   int
		valid bool
	}{{4, true}, {5, true}, {6, false}, {7, true}, {8, true}, {9, false}} {
		got = append(got, d.Describe(e.lid, e.valid).Text(dests.Unknown))
	}
	want := []string{
		": (Channel Adapter portguid 0x0000000000000010: 'host')",
		": (path #2 out of 4: portguid 0x0000000000000010)",
		": (path #2 - illegal port)",
		": (path #4 out of 4: portguid 0x0000000000000010)",
		": (unknown)",
		": (illegal port)",
	}
	if !slices.Equal(got, want) {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
}
