package diagnose

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/jsonv"
	"github.com/ibtool/ibtool/internal/mad"
)

// capable gives every port of the tiny fabric the sets of real 4X QDR
// hardware: 1X and 4X, SDR to QDR, all of it enabled, running at 4X QDR.
func capable(tn *tiny) {
	for _, n := range tn.b.f.Nodes {
		for _, p := range n.Ports {
			if p != nil {
				setPI(p, func(pi *mad.PortInfo) {
					pi.LinkWidthSupported, pi.LinkWidthEnabled, pi.LinkWidthActive = 0x3, 0x3, mad.LinkWidth4X
					pi.LinkSpeedSupported, pi.LinkSpeedEnabled, pi.LinkSpeedActive = 7, 7, mad.LinkSpeedQDR
				})
			}
		}
	}
}

// onLink changes both ends of the link at port p.
func onLink(p *discovery.Port, change func(*mad.PortInfo)) {
	setPI(p, change)
	setPI(p.Remote, change)
}

// places are the findings as "code at 0xGUID[port]".
func places(found []Finding) []string {
	var out []string
	for _, f := range found {
		s := f.Code + " at "
		if f.At != nil {
			s += fmt.Sprintf("%s[%d]", mad.GUID(f.At.NodeGUID), f.At.Port)
		}
		out = append(out, s)
	}
	return out
}

// jsonCheck checks a finding's JSON against the vocabulary's rules.
func jsonCheck(f *Finding) error {
	b, err := json.Marshal(f)
	if err != nil {
		return err
	}
	if v := jsonv.Check(b); len(v) > 0 {
		return fmt.Errorf("%v in %s", v, b)
	}
	return nil
}

func TestLinksAtTheirBestHaveNoCapabilityFindings(t *testing.T) {
	tn := newTiny()
	capable(tn)
	if got := codes(run(t, linksCheck{}, tn.s, nil)); len(got) != 0 {
		t.Errorf("4X QDR links of 4X QDR ports: %v", got)
	}
	// Every link enabled for 1X SDR only: the site's choice, all alike.
	for _, n := range tn.b.f.Nodes {
		for _, p := range n.Ports {
			if p != nil && p.Remote != nil {
				setPI(p, func(pi *mad.PortInfo) {
					pi.LinkWidthEnabled, pi.LinkWidthActive = 0x1, mad.LinkWidth1X
					pi.LinkSpeedEnabled, pi.LinkSpeedActive = 1, mad.LinkSpeedSDR
				})
			}
		}
	}
	if got := codes(run(t, linksCheck{}, tn.s, nil)); len(got) != 0 {
		t.Errorf("every link enabled for 1X SDR: %v", got)
	}
}

func TestLinksBelowWhatTheirEndsCanDo(t *testing.T) {
	tn := newTiny()
	capable(tn)
	// host2's link trained at 1X though both ends are enabled for 4X.
	setPI(tn.hst.Port(1), func(pi *mad.PortInfo) { pi.LinkWidthActive = mad.LinkWidth1X })
	setPI(tn.sw2.Port(1), func(pi *mad.PortInfo) { pi.LinkWidthActive = mad.LinkWidth1X })
	// One switch link enabled for 1X only at both ends (ibsim's w=1).
	onLink(tn.sw1.Port(5), func(pi *mad.PortInfo) { pi.LinkWidthEnabled, pi.LinkWidthActive = 0x1, mad.LinkWidth1X })
	// host1's link at SDR, both ends enabled for SDR to QDR.
	onLink(tn.host1.Port(1), func(pi *mad.PortInfo) { pi.LinkSpeedActive = mad.LinkSpeedSDR })
	// The other switch link enabled for SDR and DDR only, running DDR.
	onLink(tn.sw1.Port(6), func(pi *mad.PortInfo) { pi.LinkSpeedEnabled, pi.LinkSpeedActive = 3, mad.LinkSpeedDDR })

	found := run(t, linksCheck{}, tn.s, nil)
	want := []string{
		"links.below_enabled_speed at 0x0000000000000100[1]",   // host1, at its host end
		"links.below_supported_width at 0x0000000000000200[5]", // sw1's end, the lesser GUID
		"links.below_supported_speed at 0x0000000000000200[6]",
		"links.below_enabled_width at 0x0000000000000400[1]", // host2
	}
	if got := places(found); !reflect.DeepEqual(got, want) {
		t.Fatalf("findings %v\nwant %v", got, want)
	}
	for _, f := range found {
		if err := jsonCheck(&f); err != nil {
			t.Errorf("%s: %v", f.Code, err)
		}
	}
	w := found[1]
	if w.Severity != Warning || w.Get("enabled_width") != jsonv.Width("1X") || w.Get("supported_width") != jsonv.Width("4X") ||
		w.Get("peers_width") != jsonv.Width("4X") || w.Remote == nil || w.Remote.NodeGUID != 0x300 {
		t.Errorf("below supported width: %+v", w)
	}
	if !strings.Contains(w.Message, "runs at 1X, both ends support 4X and other such links run at 4X") {
		t.Errorf("message %q", w.Message)
	}
	e := found[3]
	if e.Severity != Error || e.Get("enabled_width") != jsonv.Width("4X") || e.Message != "the link runs at 1X, both ends are enabled for 4X" {
		t.Errorf("below enabled width: %+v", e)
	}
	if s := found[2]; s.Get("peers_speed_text") != "QDR" || s.Get("enabled_speed_text") != "DDR" || s.Get("supported_speed_text") != "QDR" {
		t.Errorf("below supported speed: %+v", s.Evidence)
	}
}

// Extended speeds count when both ends announce them: EDR where both
// support and enable HDR is a fault; where another link between such
// ends runs HDR and this one is enabled for EDR, a configuration.
func TestLinksBelowOnExtendedSpeeds(t *testing.T) {
	tn := newTiny()
	capable(tn)
	for _, n := range tn.b.f.Nodes {
		for _, p := range n.Ports {
			if p != nil {
				setPI(p, func(pi *mad.PortInfo) {
					pi.CapabilityMask |= uint32(mad.PortCapMaskExtendedSpeeds)
					pi.LinkSpeedExtSupported, pi.LinkSpeedExtEnabled, pi.LinkSpeedExtActive = 0x7, 0x7, mad.LinkSpeedExtHDR
				})
			}
		}
	}
	if got := codes(run(t, linksCheck{}, tn.s, nil)); len(got) != 0 {
		t.Fatalf("HDR everywhere: %v", got)
	}
	onLink(tn.sw1.Port(5), func(pi *mad.PortInfo) { pi.LinkSpeedExtActive = mad.LinkSpeedExtEDR })
	onLink(tn.sw1.Port(6), func(pi *mad.PortInfo) { pi.LinkSpeedExtEnabled, pi.LinkSpeedExtActive = 0x3, mad.LinkSpeedExtEDR })
	want := []string{"links.below_enabled_speed at 0x0000000000000200[5]", "links.below_supported_speed at 0x0000000000000200[6]"}
	if got := places(run(t, linksCheck{}, tn.s, nil)); !reflect.DeepEqual(got, want) {
		t.Errorf("findings %v, want %v", got, want)
	}
}
