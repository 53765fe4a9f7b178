package mad

import (
	"fmt"
	"slices"
	"strings"
)

// Dump formats s for tracing: one line per 32-bit word with its byte
// offset, the word in hex, and the fields that start in it.
//
//	PortInfo (IBA 14.2.5.6, 64 bytes)
//	  +0x10  00020001  LID=2 MasterSMLID=1
func Dump(s Struct) string { return DumpBytes(s.Desc(), Encode(s)) }

// DumpBytes is Dump of raw bytes laid out as d. It never fails: bytes past
// the end of b read as missing, and fields not wholly in b are left out.
func DumpBytes(d *StructDesc, b []byte) string {
	type item struct {
		off  int
		text string
	}
	var items []item
	var collect func(d *StructDesc, base int, prefix string)
	collect = func(d *StructDesc, base int, prefix string) {
		for i := range d.Fields {
			f := &d.Fields[i]
			for e := 0; e < f.Count; e++ {
				off := base + f.Offset + e*f.Stride
				if off+f.Width > len(b)*8 {
					continue
				}
				name := prefix + f.Name
				if f.Count > 1 {
					name = fmt.Sprintf("%s[%d]", name, e)
				}
				if f.Hint == HintStruct && !f.Reserved {
					collect(f.Struct, off, name+".")
					continue
				}
				if f.Reserved {
					if f.Width > 64 || getBits(b, off, f.Width) == 0 {
						continue // only reserved bits someone set are worth a look
					}
					name = prefix + "reserved"
				}
				items = append(items, item{off, name + "=" + dumpValue(f, b, off)})
			}
		}
	}
	collect(d, 0, "")
	slices.SortStableFunc(items, func(a, b item) int { return a.off - b.off })

	var sb strings.Builder
	title := d.Name + " ("
	if d.Section != "" {
		title += "IBA " + d.Section + ", "
	}
	fmt.Fprintf(&sb, "%s%d bytes)\n", title, d.Size)
	n := 0
	for word := 0; word < d.Size; word += 4 {
		fmt.Fprintf(&sb, "  +0x%02x  ", word)
		for i := word; i < word+4; i++ {
			if i < len(b) {
				fmt.Fprintf(&sb, "%02x", b[i])
			} else {
				sb.WriteString("--")
			}
		}
		var texts []string
		for ; n < len(items) && items[n].off < (word+4)*8; n++ {
			texts = append(texts, items[n].text)
		}
		if len(texts) > 0 {
			sb.WriteString("  " + strings.Join(texts, " "))
		}
		sb.WriteString("\n")
	}
	return sb.String()
}

func dumpValue(f *FieldDesc, b []byte, off int) string {
	switch {
	case f.Reserved:
		return fmt.Sprintf("%#x", getBits(b, off, f.Width))
	case f.Hint == HintGID:
		return GID(b[off/8 : off/8+16]).String()
	case f.Hint == HintString:
		text := b[off/8 : (off+f.Width)/8]
		if i := slices.Index(text, 0); i >= 0 {
			text = text[:i]
		}
		return fmt.Sprintf("%q", text)
	case f.Hint == HintBytes:
		return fmt.Sprintf("%x", b[off/8:(off+f.Width)/8])
	}
	v := getBits(b, off, f.Width)
	switch f.Hint {
	case HintHex:
		return fmt.Sprintf("%#x", v)
	case HintGUID:
		return GUID(v).String()
	case HintEnum:
		return fmt.Sprintf("%d(%s)", v, f.Enum.Text(v))
	case HintMask:
		return fmt.Sprintf("%#x[%s]", v, strings.Join(f.Enum.MaskTexts(v), ","))
	}
	return fmt.Sprintf("%d", v)
}
