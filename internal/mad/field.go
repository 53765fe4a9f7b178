package mad

import "strings"

// FormatField is the label and text of field path of s as the printers
// show it: libibmad's label and formatter where the field has a label
// (Dotted), the field's path and the dump's value otherwise (Dump). An
// array named whole is the dump's values, element by element; a nested
// structure is its own lines (Dotted's, or the dump's), ending in "\n".
func FormatField(s Struct, path string) (label, value string, err error) {
	ref, err := s.Desc().resolve(path)
	if err != nil {
		return "", "", err
	}
	b := Encode(s)
	f := ref.f
	if f.Label != "" && !ref.whole && f.Hint != HintStruct {
		return f.Label, formatIBMAD(f, ibmadValueAt(b, ref.off, ref.width)), nil
	}
	switch {
	case f.Hint == HintStruct && !ref.whole && ref.off%8 == 0:
		var sb strings.Builder
		dotted(&sb, f.Struct, b, ref.off, &DottedOptions{})
		if sb.Len() > 0 {
			return path, sb.String(), nil
		}
		return path, DumpBytes(f.Struct, b[ref.off/8:(ref.off+f.Width)/8]), nil
	case ref.whole && f.Hint != HintStruct:
		var sb strings.Builder
		for e := 0; e < f.Count; e++ {
			if e > 0 {
				sb.WriteByte(' ')
			}
			sb.WriteString(dumpValue(f, b, ref.off+e*f.Stride))
		}
		return path, sb.String(), nil
	case ref.whole:
		return path, DumpBytes(s.Desc(), b), nil
	}
	return path, dumpValue(f, b, ref.off), nil
}

// FieldPaths lists the paths of s's named fields, nested structures'
// fields as "Outer.Inner": the names FormatField, SetText and CompMask
// accept (besides array indexes).
func FieldPaths(d *StructDesc) []string {
	var out []string
	var walk func(d *StructDesc, prefix string, depth int)
	walk = func(d *StructDesc, prefix string, depth int) {
		for i := range d.Fields {
			f := &d.Fields[i]
			if f.Reserved || f.Name == "" {
				continue
			}
			out = append(out, prefix+f.Name)
			if f.Hint == HintStruct && depth < 3 {
				walk(f.Struct, prefix+f.Name+".", depth+1)
			}
		}
	}
	walk(d, "", 0)
	return out
}
