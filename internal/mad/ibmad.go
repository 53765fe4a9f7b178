package mad

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// This file prints structures the way libibmad (infiniband-diags 44) does,
// byte for byte: mad_dump_field's "Label:....value" lines (fields.c) with
// the value formatters of dump.c.

// dottedWidth is libibmad's label column: the label, a colon, and dots up
// to column 33 (_mad_dump_field pads labels shorter than 32 characters).
const dottedWidth = 32

// dottedLineMax is the longest line libibmad prints: its callers format a
// field into a 1024-byte buffer (dump_portinfo), cutting longer values.
const dottedLineMax = 1023

// notDisplayed is what smpquery prints for a key unless -K is given.
const notDisplayed = "<not displayed>"

// DottedLine formats one line as libibmad does: label, ':', dots to column
// 33, value. Labels of 32 characters or more get no dots.
func DottedLine(label, value string) string {
	dots := ""
	if len(label) < dottedWidth {
		dots = strings.Repeat(".", dottedWidth-len(label))
	}
	line := label + ":" + dots + value
	if len(line) > dottedLineMax {
		line = line[:dottedLineMax]
	}
	return line
}

// DottedOptions selects what Dotted prints.
type DottedOptions struct {
	ShowKeys bool     // print key fields (M_Key) instead of "<not displayed>"
	Groups   []string // also print the fields of these groups
}

// Dotted prints every labelled field of s, one line each ending in "\n",
// in the description's order, as smpquery, perfquery and saquery print
// them. A nil opts prints the default set.
func Dotted(s Struct, opts *DottedOptions) string {
	if opts == nil {
		opts = &DottedOptions{}
	}
	var sb strings.Builder
	dotted(&sb, s.Desc(), Encode(s), 0, opts)
	return sb.String()
}

func dotted(sb *strings.Builder, d *StructDesc, b []byte, base int, opts *DottedOptions) {
	for i := range d.Fields {
		f := &d.Fields[i]
		if f.Reserved || f.Group != "" && !slices.Contains(opts.Groups, f.Group) {
			continue
		}
		if f.Label == "" {
			if f.Hint == HintStruct { // print the nested structure's labels
				for e := 0; e < f.Count; e++ {
					dotted(sb, f.Struct, b, base+f.Offset+e*f.Stride, opts)
				}
			}
			continue
		}
		if f.Key && !opts.ShowKeys {
			sb.WriteString(DottedLine(f.Label, notDisplayed))
			sb.WriteByte('\n')
			continue
		}
		if f.Count > 1 && strings.Contains(f.Label, "%d") {
			for e := 0; e < f.Count; e++ {
				label := strings.Replace(f.Label, "%d", strconv.Itoa(e), 1)
				v := ibmadValueAt(b, base+f.IBMADOffset+e*f.Stride, f.Width)
				sb.WriteString(DottedLine(label, formatIBMAD(f, v)))
				sb.WriteByte('\n')
			}
			continue
		}
		v := ibmadValueAt(b, base+f.IBMADOffset, f.Span())
		sb.WriteString(DottedLine(f.Label, formatIBMAD(f, v)))
		sb.WriteByte('\n')
	}
}

// FormatIBMAD returns libibmad's text for the value of field path of s,
// as mad_dump_val prints it (iblinkinfo and ibnetdiscover use these texts).
func FormatIBMAD(s Struct, path string) (string, error) {
	ref, err := s.Desc().resolve(path)
	if err != nil {
		return "", err
	}
	return formatIBMAD(ref.f, ibmadValueAt(Encode(s), ref.off, ref.width)), nil
}

// ibmadValue is a field's value as a libibmad formatter sees it.
type ibmadValue struct {
	u     uint64 // the number, if bits <= 64
	b     []byte // the bytes, if byte aligned
	bits  int
	bytes int // libibmad's valsz: ALIGN(bits, 8) / 8
}

func ibmadValueAt(b []byte, off, bits int) ibmadValue {
	v := ibmadValue{bits: bits, bytes: (bits + 7) / 8}
	if bits <= 64 {
		v.u = getBits(b, off, bits)
	}
	if off%8 == 0 && bits%8 == 0 {
		v.b = b[off/8 : (off+bits)/8]
	}
	return v
}

// formatIBMAD applies f's libibmad formatter (FieldDesc.IBMAD) to v.
func formatIBMAD(f *FieldDesc, v ibmadValue) string {
	switch f.IBMAD {
	case "uint":
		return strconv.FormatUint(v.u, 10)
	case "int":
		if v.bytes <= 4 {
			return strconv.Itoa(int(int32(uint32(v.u))))
		}
		return strconv.FormatUint(v.u, 10)
	case "hex":
		return ibmadHex(v)
	case "array":
		return fmt.Sprintf("%x", v.b)
	case "string":
		return ibmadString(v.b)
	case "enum":
		return f.Enum.Text(v.u)
	case "capmask":
		return ibmadCapMask(f.Enum, v.u)
	case "linkwidthen":
		return ibmadLinkWidths(v.u)
	case "linkwidthsup":
		s := ibmadLinkWidths(v.u)
		switch v.u {
		case 1, 3, 7, 11, 15, 17, 19, 23, 27, 31:
		default:
			if v.u>>5 == 0 {
				s += " (IBA extension)"
			}
		}
		return s
	case "linkspeedsup", "linkspeeden":
		return ibmadLinkSpeeds(v.u)
	case "linkspeedextsup":
		return ibmadLinkSpeedsExt(v.u)
	case "linkspeedexten":
		if v.u == 30 {
			return "Extended link speeds disabled"
		}
		return ibmadLinkSpeedsExt(v.u)
	case "linkspeedext2bits":
		return ibmadLinkSpeedsExt2(v.u)
	}
	return fmt.Sprintf("<no formatter %q>", f.IBMAD)
}

// ibmadHex is mad_dump_hex: 0x and two digits per byte of the field.
func ibmadHex(v ibmadValue) string {
	if v.bits > 64 {
		return "" // libibmad: "bad int sz", empty value
	}
	return fmt.Sprintf("0x%0*x", 2*v.bytes, v.u)
}

// ibmadString is mad_dump_string: the text up to its NUL, in single quotes,
// cut to the field's length less one (snprintf's bound).
func ibmadString(b []byte) string {
	text := b
	if i := slices.Index(b, 0); i >= 0 {
		text = b[:i]
	}
	s := "'" + string(text) + "'"
	if max := max(len(b)-1, 0); len(s) > max {
		s = s[:max]
	}
	return s
}

// ibmadCapMask is mad_dump_portcapmask and mad_dump_portcapmask2: the mask
// in hex, then one line of four tabs and a name for each named bit set.
func ibmadCapMask(e *EnumDesc, mask uint64) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "0x%x", mask)
	for _, name := range e.MaskTexts(mask) {
		sb.WriteString("\n\t\t\t\t")
		sb.WriteString(name)
	}
	return sb.String()
}

// orList joins the names of the bits set in v, lowest first, as dump.c
// does: each followed by " or ".
func orList(v uint64, names []string) string {
	var sb strings.Builder
	for bit, name := range names {
		if name != "" && v&(1<<bit) != 0 {
			sb.WriteString(name + " or ")
		}
	}
	return sb.String()
}

// ibmadLinkWidths is dump_linkwidth (LinkWidthEnabled, and the start of
// LinkWidthSupported).
func ibmadLinkWidths(w uint64) string {
	s := orList(w, []string{"1X", "4X", "8X", "12X", "2X"})
	if w == 0 || w>>5 != 0 {
		return s + fmt.Sprintf("undefined (%d)", w)
	}
	return strings.TrimSuffix(s, " or ")
}

// ibmadLinkSpeeds is dump_linkspeed (LinkSpeedSupported and Enabled).
func ibmadLinkSpeeds(v uint64) string {
	s := orList(v, []string{"2.5 Gbps", "5.0 Gbps", "10.0 Gbps"})
	if v == 0 || v>>3 != 0 {
		s += fmt.Sprintf("undefined (%d)", v)
	} else {
		s = strings.TrimSuffix(s, " or ")
	}
	switch v {
	case 1, 3, 5, 7:
	default:
		if v>>3 == 0 {
			s += " (IBA extension)"
		}
	}
	return s
}

// ibmadLinkSpeedsExt is dump_linkspeedext (LinkSpeedExtSupported and
// Enabled): "0" for none.
func ibmadLinkSpeedsExt(v uint64) string {
	if v == 0 {
		return "0"
	}
	s := orList(v, []string{"14.0625 Gbps", "25.78125 Gbps", "53.125 Gbps", "106.25 Gbps"})
	if v>>4 != 0 {
		return s + fmt.Sprintf("undefined (%d)", v)
	}
	return strings.TrimSuffix(s, " or ")
}

// ibmadLinkSpeedsExt2 is dump_linkspeedext2 of libibmad 50+ (XDR fields).
// Like it, an unknown bit replaces the whole text with " undefined (N)".
func ibmadLinkSpeedsExt2(v uint64) string {
	switch {
	case v == 0:
		return "0"
	case v>>1 != 0:
		return fmt.Sprintf(" undefined (%d)", v)
	}
	return "212.5 Gbps"
}

// FormatSLtoVL is mad_dump_sltovl, the table line of smpquery sl2vl:
// "| 0| 1|...|15|\n".
func FormatSLtoVL(t *SLtoVLMappingTable) string {
	var sb strings.Builder
	sb.WriteString("|")
	for _, vl := range t.VL {
		fmt.Fprintf(&sb, "%2d|", vl)
	}
	sb.WriteString("\n")
	return sb.String()
}

// FormatVLArbitration is mad_dump_vlarbitration for the first n entries
// of t, as smpquery vlarb prints a block: "\nVL    : |0x0 |...\nWEIGHT: |...\n".
func FormatVLArbitration(t *VLArbitrationTable, n int) string {
	n = max(0, min(n, len(t.Entry)))
	var sb strings.Builder
	sb.WriteString("\nVL    : |")
	for _, e := range t.Entry[:n] {
		fmt.Fprintf(&sb, "0x%-2X|", e.VL)
	}
	sb.WriteString("\nWEIGHT: |")
	for _, e := range t.Entry[:n] {
		fmt.Fprintf(&sb, "0x%-2X|", e.Weight)
	}
	sb.WriteString("\n")
	return sb.String()
}
