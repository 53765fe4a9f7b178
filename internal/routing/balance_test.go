package routing

import (
	"fmt"
	"slices"
	"testing"

	"github.com/ibtool/ibtool/internal/discovery"
)

// ends writes end ports as "guid[port]".
func ends(ps []*discovery.Port) []string {
	var out []string
	for _, p := range ps {
		out = append(out, fmt.Sprintf("%x[%d]", p.Node.GUID, p.Num))
	}
	return out
}

func TestThrough(t *testing.T) {
	fab, sp, lf := treeFabric(2, 2, 2)
	tb := readTables(t, fab, Want{LFT: true})
	// Leaf 0 sends the other leaf's hosts, the other leaf and spine 0 up
	// port 1, in LID order (hosts 1..4, spines 5, 6, leaves 7, 8).
	if got, want := ends(tb.Through(lf[0].GUID, 1)), []string{"10020[1]", "10030[1]", "100[0]", "201[0]"}; !slices.Equal(got, want) {
		t.Errorf("through leaf 0's port 1: %v, want %v", got, want)
	}
	if got := ends(tb.Through(lf[0].GUID, 3)); !slices.Equal(got, []string{"10000[1]"}) {
		t.Errorf("through leaf 0's port 3: %v", got)
	}
	if got := tb.Through(sp[0].GUID, 7); len(got) != 0 {
		t.Errorf("through a port with nothing: %v", got)
	}
	if got := tb.Through(0x999, 1); got != nil {
		t.Errorf("through a switch with no table: %v", got)
	}
}

func TestThroughNamesAnLMCRangeByItsFirstValidLID(t *testing.T) {
	fab, _, sw1, _, far := lineFabric()
	tb := readTables(t, fab, Want{LFT: true})
	tb.Fabric.Node(far.GUID).Port(1).LMC = 2 // LIDs 4..7
	lft := tb.Switches[sw1.GUID].LFT
	lft.Ports[4], lft.Ports[5], lft.Ports[6], lft.Ports[7] = NoPort, 1, 2, 2
	// LID 4 has no entry: LID 5 names far, and it goes out of port 1.
	if got := ends(tb.Through(sw1.GUID, 1)); !slices.Equal(got, []string{"100[1]", "400[1]"}) {
		t.Errorf("through port 1: %v", got)
	}
	if got := ends(tb.Through(sw1.GUID, 2)); !slices.Equal(got, []string{"300[0]"}) {
		t.Errorf("through port 2: %v", got)
	}
	b := tb.Balance(sw1.GUID)
	// The host's LID out of 1, far's 5 out of 1 and 6, 7 out of 2;
	// switch LIDs do not count.
	if want := []int{0, 2, 2, 0, 0, 0, 0, 0, 0}; !slices.Equal(b.Routes, want) {
		t.Errorf("routes %v, want %v", b.Routes, want)
	}
	if len(b.Hosts) != 2 || b.Hosts[1].Port.Node.GUID != far.GUID || b.Hosts[1].LIDs != 3 || !slices.Equal(b.Hosts[1].Out.Ports(), []int{1, 2}) {
		t.Errorf("hosts %+v", b.Hosts)
	}
}

func TestBalance(t *testing.T) {
	fab, _, lf := treeFabric(2, 2, 2)
	tb := readTables(t, fab, Want{LFT: true})
	b := tb.Balance(lf[0].GUID)
	if b.Switch.GUID != lf[0].GUID {
		t.Fatalf("balance of %x", b.Switch.GUID)
	}
	// The other leaf's two hosts up port 1, each own host down its port.
	if want := []int{0, 2, 0, 1, 1}; !slices.Equal(b.Routes, want) {
		t.Errorf("routes %v, want %v", b.Routes, want)
	}
	if len(b.Hosts) != 4 {
		t.Fatalf("hosts %+v", b.Hosts)
	}
	for _, h := range b.Hosts {
		if h.LIDs != 1 || h.Out.Len() != 1 {
			t.Errorf("host %x: %d LIDs out of %v", h.Port.Node.GUID, h.LIDs, h.Out.Ports())
		}
	}
	if tb.Balance(0x999) != nil {
		t.Errorf("a balance for a switch with no table")
	}
	// Every switch read, by GUID: the spines, then leaf 0.
	delete(tb.Switches, lf[1].GUID)
	all := tb.Balances()
	if len(all) != 3 || all[2].Switch.GUID != lf[0].GUID || !slices.Equal(all[2].Routes, b.Routes) {
		t.Errorf("balances of %d switches, the last %x", len(all), all[len(all)-1].Switch.GUID)
	}
}

func TestUneven(t *testing.T) {
	ports := func(routes ...int) []PortRoutes {
		var out []PortRoutes
		for i, r := range routes {
			out = append(out, PortRoutes{i + 1, r})
		}
		return out
	}
	repeat := func(n, r int) []int { return slices.Repeat([]int{r}, n) }
	for _, c := range []struct {
		name      string
		weighed   []PortRoutes
		ports     int
		heuristic bool
		want      bool
	}{
		{"even", ports(5, 4, 5), 3, false, false},
		{"uneven", ports(5, 3, 5), 3, false, true},
		{"nothing weighed", nil, 0, false, false},
		{"half the ports to the spines", ports(slices.Concat(repeat(7, 10), repeat(7, 5))...), 14, true, false},
		{"the same without -e", ports(slices.Concat(repeat(7, 10), repeat(7, 5))...), 14, false, true},
		{"the other half uneven", ports(slices.Concat(repeat(7, 10), repeat(3, 5), repeat(4, 2))...), 14, true, true},
		{"the other half too few", ports(slices.Concat(repeat(11, 10), repeat(3, 5))...), 14, true, true},
		{"not fully populated", ports(slices.Concat(repeat(7, 10), repeat(2, 9), repeat(5, 0))...), 14, true, false},
		{"too few ports for -e", ports(10, 5, 5), 3, true, true},
	} {
		if got := Uneven(c.weighed, c.ports, c.heuristic); got != c.want {
			t.Errorf("%s: uneven %v, want %v", c.name, got, c.want)
		}
	}
}
