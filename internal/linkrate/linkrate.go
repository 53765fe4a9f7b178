package linkrate

import (
	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/jsonv"
	"github.com/ibtool/ibtool/internal/mad"
)

// The width and speed texts of a port's link, the one implementation the
// fabric commands share, on internal/mad/speeds.go: ibnetdiscover's
// columns ("4x", "EDR"), iblinkinfo's active speed ("25.78125 Gbps"), and
// the JSON vocabulary's rate, named by ibnetdiscover's columns.

// Rate is what the texts are made of: the port's PortInfo, the
// PortInfo whose CapabilityMask counts for it (port 0's on a switch, nil
// when the switch has no port 0), and the FDR10 bit of its Mellanox
// extended PortInfo.
type Rate struct {
	PI, CI *mad.PortInfo
	fdr10  bool
}

// Of is p's Rate.
func Of(p *discovery.Port) Rate { return With(p, (*discovery.Port).Info) }

// With is Of with info decoding the PortInfos (a cache of them).
func With(p *discovery.Port, info func(*discovery.Port) *mad.PortInfo) Rate {
	r := Rate{PI: info(p), fdr10: MlnxExt(p).LinkSpeedActive&uint8(mad.MlnxLinkSpeedFDR10) != 0}
	if p.Node.Type != discovery.NodeSwitch {
		r.CI = r.PI
	} else if p0 := p.Node.Port(0); p0 != nil {
		r.CI = info(p0)
	}
	return r
}

// MlnxExt is p's Mellanox extended PortInfo, zero when it was not read.
func MlnxExt(p *discovery.Port) mad.MlnxExtPortInfo {
	var x mad.MlnxExtPortInfo
	if len(p.MlnxExtPortInfo) >= mad.MlnxExtPortInfoSize {
		_ = x.Unmarshal(p.MlnxExtPortInfo)
	}
	return x
}

// CompatWidth is ibnetdiscover's width column: "4x".
func (r Rate) CompatWidth() string { return mad.WidthCompatName(r.PI.LinkWidthActive) }

// CompatSpeed is ibnetdiscover's speed column: "EDR". Without capability
// information (a switch without port 0) it has no speed: "???".
func (r Rate) CompatSpeed() string {
	if r.CI == nil {
		return mad.SpeedCompatName(0, 0, false)
	}
	// ibnetdiscover looks at the FDR10 bit only for a link at QDR.
	speed := r.PI.LinkSpeedActive
	return mad.SpeedCompatName(mad.AggregateExtSpeed(r.PI, r.CI), speed, speed == mad.LinkSpeedQDR && r.fdr10)
}

// ActiveWidth and activeSpeed are iblinkinfo's texts of an active link:
// "4X", "25.78125 Gbps". Without capability information both are zero.
func (r Rate) ActiveWidth() string {
	if r.CI == nil {
		return mad.LinkWidth(0).String()
	}
	return r.PI.LinkWidthActive.String()
}

func (r Rate) ActiveSpeed() string {
	if r.CI == nil {
		return mad.ActiveSpeedText(&mad.PortInfo{}, nil, r.fdr10)
	}
	return mad.ActiveSpeedText(r.PI, r.CI, r.fdr10)
}

// jsonRate is the link's rate in the JSON vocabulary, from ibnetdiscover's
// columns. Without capability information the width is unknown too.
func (r Rate) JSONRate() jsonv.Rate {
	w := r.PI.LinkWidthActive
	if r.CI == nil {
		w = 0
	}
	return jsonv.RateOf(jsonv.WidthOf(w), r.CompatSpeed())
}
