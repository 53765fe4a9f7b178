package discovery

import (
	"math/rand/v2"
	"testing"

	"github.com/ibtool/ibtool/internal/mad"
)

// The raw accessors read what the generated decoders read.
func TestRawFieldsMatchTheGeneratedDecoders(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	b := make([]byte, 64)
	for range 1000 {
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		var pi mad.PortInfo
		var ni mad.NodeInfo
		if pi.Unmarshal(b) != nil || ni.Unmarshal(b) != nil {
			t.Fatal("decode")
		}
		r := rawPortInfo(b)
		if r.lid() != pi.LID || r.capMask() != pi.CapabilityMask || r.localPort() != int(pi.LocalPortNum) ||
			r.physState() != uint8(pi.PortPhysicalState) || r.lmc() != pi.LMC ||
			r.linkSpeedActive() != uint8(pi.LinkSpeedActive) || r.linkSpeedExtActive() != uint8(pi.LinkSpeedExtActive) {
			t.Fatalf("PortInfo %x: raw fields differ from %+v", b, pi)
		}
		n := rawNodeInfo(b)
		if n.deviceID() != ni.DeviceID || n.vendorID() != ni.VendorID || b[nodeInfoLocalPortOff] != ni.LocalPortNum {
			t.Fatalf("NodeInfo %x: raw fields differ from %+v", b, ni)
		}
	}
	if rawPortInfo(nil).lid() != 0 || rawNodeInfo(b[:3]).vendorID() != 0 || (capExtendedSpeed != uint32(mad.PortCapMaskExtendedSpeeds)) ||
		physLinkUp != uint8(mad.PhysPortStateLinkUp) || speedQDR != uint8(mad.LinkSpeedQDR) {
		t.Error("short blobs must read as zeros; constants must match internal/mad")
	}
}
