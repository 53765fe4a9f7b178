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
