package counters

import (
	"encoding/json"
	"fmt"
	"math/big"
	"strconv"
	"strings"

	"github.com/ibtool/ibtool/internal/mad"
)

// AllPortSelect is PortSelect's "every port" value (AllPortSelect).
const AllPortSelect = 0xFF

// Add adds every counter of src to dst, saturating at the
// counter's width as the IBA counters do. PortSelect and the counter
// selects are src's (perfquery prints the last port's).
func Add(dst, src mad.Struct) {
	for i := range src.Desc().Fields {
		f := &src.Desc().Fields[i]
		if f.Reserved || !f.IsNumber() {
			continue
		}
		for e := 0; e < f.Count; e++ {
			path := f.Name
			if f.Count > 1 {
				path += "[" + strconv.Itoa(e) + "]"
			}
			v, _ := mad.Get(src, path)
			switch f.Name {
			case "PortSelect", "CounterSelect", "CounterSelect2", "OpCode":
			default:
				d, _ := mad.Get(dst, path)
				limit := ^uint64(0) >> (64 - f.Width)
				if v > limit-d {
					v = limit
				} else {
					v += d
				}
			}
			_ = mad.Set(dst, path, v)
		}
	}
}

// OctetsPerUnit is what one unit of a data counter is: 4 octets (IBA
// 16.1.3.5: "data octets divided by 4").
const OctetsPerUnit = 4

// DataFields are the counters of OctetsPerUnit-octet words; their JSON
// gets a <name>_bytes companion.
var DataFields = map[string]bool{
	"PortXmitData": true, "PortRcvData": true, "PortOpRcvData": true,
	"PortVLOpData": true, "PortXmitDataSL": true, "PortRcvDataSL": true,
}

// Bytes is the octets v units of a data counter are, exactly: a
// saturated 64-bit counter is more than a uint64 of bytes.
func Bytes(v uint64) *big.Int {
	return new(big.Int).Mul(new(big.Int).SetUint64(v), big.NewInt(OctetsPerUnit))
}

// JSON is s as mad's JSON, plus <name>_bytes for the data counters
// (Bytes of the value).
func JSON(s mad.Struct) json.RawMessage {
	b, err := json.Marshal(s)
	if err != nil || len(b) < 2 {
		return b
	}
	var extra strings.Builder
	for i := range s.Desc().Fields {
		f := &s.Desc().Fields[i]
		if f.Reserved || !DataFields[f.Name] {
			continue
		}
		bytesOf := func(e int) string {
			path := f.Name
			if f.Count > 1 {
				path += "[" + strconv.Itoa(e) + "]"
			}
			v, _ := mad.Get(s, path)
			return Bytes(v).String()
		}
		fmt.Fprintf(&extra, ",%q:", f.JSONName+"_bytes")
		if f.Count == 1 {
			extra.WriteString(bytesOf(0))
			continue
		}
		extra.WriteByte('[')
		for e := 0; e < f.Count; e++ {
			if e > 0 {
				extra.WriteByte(',')
			}
			extra.WriteString(bytesOf(e))
		}
		extra.WriteByte(']')
	}
	return append(append(b[:len(b)-1:len(b)-1], extra.String()...), '}')
}
