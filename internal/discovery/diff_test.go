package discovery

import (
	"fmt"
	"testing"
)

func TestCompare(t *testing.T) {
	rate := func(p *Port) LinkRate {
		return LinkRate{Width: fmt.Sprint(p.Info().LinkWidthActive), Speed: fmt.Sprint(p.Info().LinkSpeedActive)}
	}
	f, _, _, _, _, _ := tinyFake()
	ref := discover(t, f, 8, Options{})
	if d := Compare(ref, ref, rate); !d.Same() || d.CurrentEndPorts != 5 || d.CurrentNodes != 5 || d.CurrentLinks != 4 || d.CurrentLIDs != 5 {
		t.Fatalf("a fabric differs from itself: %+v", d)
	}
	f, _, _, _, hca2, _ := tinyFake()
	f.Unlink(hca2, 1) // unplugged
	cur := discover(t, f, 8, Options{})
	cur.Node(0x100006).Port(1).PortInfo[31] = 8 // Hca3 at 12X
	d := Compare(ref, cur, rate)
	if d.Same() || len(d.ReferenceOnlyNodes) != 1 || d.ReferenceOnlyNodes[0] != 0x100003 || len(d.CurrentOnlyNodes) != 0 ||
		len(d.ReferenceOnlyEndPorts) != 1 || d.ReferenceOnlyEndPorts[0] != 0x100004 ||
		len(d.ReferenceOnlyLinks) != 1 || d.ReferenceOnlyLinks[0] != (LinkRef{PortRef{0x200000, 4}, PortRef{0x100004, 1}}) ||
		len(d.LIDChanges) != 1 || d.LIDChanges[0] != (LIDChange{LID: hca2.LID(1), Current: 0, Reference: 0x100004}) {
		t.Errorf("Hca2 unplugged: %+v", d)
	}
	// The rate is the link's A end's: Switch2's port 1 did not change.
	if len(d.RateChanges) != 0 {
		t.Errorf("rate changes %+v", d.RateChanges)
	}
	cur.Node(0x200001).Port(1).PortInfo[31] = 8
	if d = Compare(ref, cur, rate); len(d.RateChanges) != 1 || d.RateChanges[0].Current.Width != "12X" || d.RateChanges[0].Reference.Width != "4X" {
		t.Errorf("rate changes %+v", d.RateChanges)
	}
}
