package mad

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
)

// JSON encoding of the generated structures (their MarshalJSON methods).
//
// Keys are FieldDesc.JSONName (snake_case), in the description's order;
// reserved bits are left out. Values:
//   - dec: JSON numbers (64-bit counters too)
//   - hex: JSON numbers; wider than 53 bits (keys, prefixes), "0x..."
//     strings, since JSON readers hold numbers as doubles
//   - guid: "0x%016x" strings
//   - gid: IPv6 text ("fe80::2:c903:0:1234")
//   - str: the text up to its first NUL
//   - bytes: hex digits
//   - enum: the number, and NAME_text with libibmad's text; NodeType is
//     the exception: "ca", "switch" or "router" (the vocabulary of every
//     command's JSON, docs/json.md; null for another value), and NAME_text
//   - mask: the number, and NAME_names with the texts of the named bits set
//   - struct: a nested object
//   - count > 1: a JSON array of the elements (and of their _text/_names)
//
// The schema is stable: a field's key changes only with its spec line.

func marshalJSON(s Struct) ([]byte, error) {
	var buf bytes.Buffer
	writeJSONStruct(&buf, s.Desc(), Encode(s), 0, false)
	return buf.Bytes(), nil
}

// JSON encodes s as its MarshalJSON does, except that, unless showKeys, the
// secret fields (M_Key, SM_Key, ...), nested ones included, are null: what
// the commands print without -K.
func JSON(s Struct, showKeys bool) []byte {
	var buf bytes.Buffer
	writeJSONStruct(&buf, s.Desc(), Encode(s), 0, !showKeys)
	return buf.Bytes()
}

func writeJSONStruct(buf *bytes.Buffer, d *StructDesc, b []byte, base int, hideKeys bool) {
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
		if f.Key && hideKeys {
			buf.WriteString("null")
			continue
		}
		eachElem(buf, f, func(e int) { writeJSONValue(buf, f, b, base+f.Offset+e*f.Stride, hideKeys) })
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

func writeJSONValue(buf *bytes.Buffer, f *FieldDesc, b []byte, off int, hideKeys bool) {
	switch f.Hint {
	case HintStruct:
		writeJSONStruct(buf, f.Struct, b, off, hideKeys)
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
	case HintEnum:
		if f.Enum == enumNodeType {
			// Never a number; null for a value that is no type (the
			// empty NodeInfo of a request).
			if t := getBits(b, off, f.Width); t < uint64(len(nodeTypeJSON)) && nodeTypeJSON[t] != "" {
				writeJSONString(buf, nodeTypeJSON[t])
			} else {
				buf.WriteString("null")
			}
			return
		}
		buf.WriteString(strconv.FormatUint(getBits(b, off, f.Width), 10))
	case HintHex:
		if f.Width > 53 {
			// JSON readers hold numbers as doubles: a 64-bit key or
			// prefix would lose its low bits. Give it as a hex string.
			writeJSONString(buf, fmt.Sprintf("0x%0*x", (f.Width+3)/4, getBits(b, off, f.Width)))
			return
		}
		buf.WriteString(strconv.FormatUint(getBits(b, off, f.Width), 10))
	default:
		buf.WriteString(strconv.FormatUint(getBits(b, off, f.Width), 10))
	}
}

// nodeTypeJSON are the node types as every command's JSON names them, by
// type ("" for none): an array, which the linker lays out, where a map
// would be built at every start.
var nodeTypeJSON = [...]string{NodeTypeCA: "ca", NodeTypeSwitch: "switch", NodeTypeRouter: "router"}

func writeJSONString(buf *bytes.Buffer, s string) {
	out, _ := json.Marshal(s)
	buf.Write(out)
}
