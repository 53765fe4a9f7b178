package cli

import (
	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/jsonv"
	"github.com/ibtool/ibtool/internal/mad"
)

// The width and speed texts of a port's link, the one implementation the
// fabric commands share, on internal/mad/speeds.go: ibnetdiscover's
// columns ("4x", "EDR"), iblinkinfo's active speed ("25.78125 Gbps"), and
// the JSON vocabulary's rate, named by ibnetdiscover's columns.

// portRate is what the texts are made of: the port's PortInfo, the
// PortInfo whose CapabilityMask counts for it (port 0's on a switch, nil
// when the switch has no port 0), and the FDR10 bit of its Mellanox
// extended PortInfo.
type portRate struct {
	pi, ci *mad.PortInfo
	fdr10  bool
}

// rateOf is p's portRate.
func rateOf(p *discovery.Port) portRate { return rateWith(p, (*discovery.Port).Info) }

// rateWith is rateOf with info decoding the PortInfos (a cache of them).
func rateWith(p *discovery.Port, info func(*discovery.Port) *mad.PortInfo) portRate {
	r := portRate{pi: info(p), fdr10: mlnxExt(p).LinkSpeedActive&uint8(mad.MlnxLinkSpeedFDR10) != 0}
	if p.Node.Type != discovery.NodeSwitch {
		r.ci = r.pi
	} else if p0 := p.Node.Port(0); p0 != nil {
		r.ci = info(p0)
	}
	return r
}

// mlnxExt is p's Mellanox extended PortInfo, zero when it was not read.
func mlnxExt(p *discovery.Port) mad.MlnxExtPortInfo {
	var x mad.MlnxExtPortInfo
	if len(p.MlnxExtPortInfo) >= mad.MlnxExtPortInfoSize {
		_ = x.Unmarshal(p.MlnxExtPortInfo)
	}
	return x
}

// compatWidth is ibnetdiscover's width column: "4x".
func (r portRate) compatWidth() string { return mad.WidthCompatName(r.pi.LinkWidthActive) }

// compatSpeed is ibnetdiscover's speed column: "EDR". Without capability
// information (a switch without port 0) it has no speed: "???".
func (r portRate) compatSpeed() string {
	if r.ci == nil {
		return mad.SpeedCompatName(0, 0, false)
	}
	// ibnetdiscover looks at the FDR10 bit only for a link at QDR.
	speed := r.pi.LinkSpeedActive
	return mad.SpeedCompatName(mad.AggregateExtSpeed(r.pi, r.ci), speed, speed == mad.LinkSpeedQDR && r.fdr10)
}

// activeWidth and activeSpeed are iblinkinfo's texts of an active link:
// "4X", "25.78125 Gbps". Without capability information both are zero.
func (r portRate) activeWidth() string {
	if r.ci == nil {
		return mad.LinkWidth(0).String()
	}
	return r.pi.LinkWidthActive.String()
}

func (r portRate) activeSpeed() string {
	if r.ci == nil {
		return mad.ActiveSpeedText(&mad.PortInfo{}, nil, r.fdr10)
	}
	return mad.ActiveSpeedText(r.pi, r.ci, r.fdr10)
}

// jsonRate is the link's rate in the JSON vocabulary, from ibnetdiscover's
// columns. Without capability information the width is unknown too.
func (r portRate) jsonRate() jsonv.Rate {
	w := r.pi.LinkWidthActive
	if r.ci == nil {
		w = 0
	}
	return jsonv.RateOf(jsonv.WidthOf(w), r.compatSpeed())
}
