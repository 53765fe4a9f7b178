package counters

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ibtool/ibtool/internal/mad"
)

func TestPerfJSONBytes(t *testing.T) {
	pce := &mad.PortCountersExtended{PortXmitData: ^uint64(0), PortRcvData: 3}
	var m map[string]json.Number
	dec := json.NewDecoder(strings.NewReader(string(JSON(pce))))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		t.Fatal(err)
	}
	// 4 x (2^64 - 1), exactly: more than a uint64 holds.
	if m["port_xmit_data_bytes"] != "73786976294838206460" || m["port_rcv_data_bytes"] != "12" || m["port_xmit_data"] != "18446744073709551615" {
		t.Errorf("%v", m)
	}
}

// times4 is exact across the whole uint64 range, where 4v overflows.
func TestTimes4(t *testing.T) {
	for v, want := range map[uint64]string{
		0: "0", 1: "4", 2: "8", 3: "12", 9: "36", 10: "40", 25: "100", 1 << 62: "18446744073709551616",
		1<<62 - 1: "18446744073709551612", ^uint64(0): "73786976294838206460", ^uint64(0) - 5: "73786976294838206440",
	} {
		if got := times4(v); got != want {
			t.Errorf("times4(%d) = %s, want %s", v, got, want)
		}
	}
}

// TestBitsAsDescribed: Bits gives every PortCounters counter the width
// the wire description has, and 0 to what is not a counter.
func TestBitsAsDescribed(t *testing.T) {
	fields := PortCounterFields()
	if len(fields) < 18 {
		t.Fatalf("%d counters", len(fields))
	}
	for _, f := range fields {
		if got := Bits(f.Name); got != f.Width {
			t.Errorf("Bits(%s) = %d, the description says %d", f.Name, got, f.Width)
		}
	}
	if got := Bits("PortSelect"); got != 0 {
		t.Errorf("Bits(PortSelect) = %d", got)
	}
}
