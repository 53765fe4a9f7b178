package mad

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strconv"
)

// JSON encoding of the generated structures (their MarshalJSON methods).
//
// Keys are FieldDesc.JSONName (snake_case), in the description's order;
// reserved bits are left out. Values:
//   - dec, hex: JSON numbers (64-bit counters too)
//   - guid: "0x%016x" strings
//   - gid: IPv6 text ("fe80::2:c903:0:1234")
//   - str: the text up to its first NUL
//   - bytes: hex digits
//   - enum: the number, and NAME_text with libibmad's text
//   - mask: the number, and NAME_names with the texts of the named bits set
//   - struct: a nested object
//   - count > 1: a JSON array of the elements (and of their _text/_names)
//
// The schema is stable: a field's key changes only with its spec line.

func marshalJSON(s Struct) ([]byte, error) {
	var buf bytes.Buffer
	writeJSONStruct(&buf, s.Desc(), Encode(s), 0)
	return buf.Bytes(), nil
}

func writeJSONStruct(buf *bytes.Buffer, d *StructDesc, b []byte, base int) {
	buf.WriteByte('{')
	first := true
	key := func(name string) {
		if !first {
			buf.WriteByte(',')
		}
		first = false
		buf.WriteString(strconv.Quote(name))
		buf.WriteByte(':')
	}
	for i := range d.Fields {
		f := &d.Fields[i]
		if f.Reserved {
			continue
		}
		key(f.JSONName)
		eachElem(buf, f, func(e int) { writeJSONValue(buf, f, b, base+f.Offset+e*f.Stride) })
		switch f.Hint {
		case HintEnum:
			key(f.JSONName + "_text")
			eachElem(buf, f, func(e int) {
				writeJSONString(buf, f.Enum.Text(getBits(b, base+f.Offset+e*f.Stride, f.Width)))
			})
		case HintMask:
			key(f.JSONName + "_names")
			eachElem(buf, f, func(e int) {
				names := f.Enum.MaskTexts(getBits(b, base+f.Offset+e*f.Stride, f.Width))
				if names == nil {
					names = []string{}
				}
				out, _ := json.Marshal(names)
				buf.Write(out)
			})
		}
	}
	buf.WriteByte('}')
}

// eachElem writes one value, or a JSON array of Count values.
func eachElem(buf *bytes.Buffer, f *FieldDesc, write func(e int)) {
	if f.Count == 1 {
		write(0)
		return
	}
	buf.WriteByte('[')
	for e := 0; e < f.Count; e++ {
		if e > 0 {
			buf.WriteByte(',')
		}
		write(e)
	}
	buf.WriteByte(']')
}

func writeJSONValue(buf *bytes.Buffer, f *FieldDesc, b []byte, off int) {
	switch f.Hint {
	case HintStruct:
		writeJSONStruct(buf, f.Struct, b, off)
	case HintGUID:
		writeJSONString(buf, GUID(getBits(b, off, 64)).String())
	case HintGID:
		writeJSONString(buf, GID(b[off/8:off/8+16]).String())
	case HintString:
		text := b[off/8 : (off+f.Width)/8]
		if i := slices.Index(text, 0); i >= 0 {
			text = text[:i]
		}
		writeJSONString(buf, string(text))
	case HintBytes:
		writeJSONString(buf, hex.EncodeToString(b[off/8:(off+f.Width)/8]))
	default:
		buf.WriteString(strconv.FormatUint(getBits(b, off, f.Width), 10))
	}
}

func writeJSONString(buf *bytes.Buffer, s string) {
	out, _ := json.Marshal(s)
	buf.Write(out)
}
