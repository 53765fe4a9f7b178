package specgen

import (
	"fmt"
	"slices"
	"strings"
)

// check resolves enum and struct references and checks every field against
// the rules of 00-format.spec, so that the generated decoders never index
// outside their input.
func (s *Spec) check() error {
	enums := map[string]*Enum{}
	for _, e := range s.Enums {
		if enums[e.Name] != nil {
			return fmt.Errorf("%s: enum %s defined twice", e.pos, e.Name)
		}
		enums[e.Name] = e
		if err := e.check(); err != nil {
			return fmt.Errorf("%s: enum %s: %v", e.pos, e.Name, err)
		}
	}
	structs := map[string]*Struct{}
	for _, st := range s.Structs {
		if structs[st.Name] != nil || enums[st.Name] != nil {
			return fmt.Errorf("%s: name %s defined twice", st.pos, st.Name)
		}
		structs[st.Name] = st
	}
	for _, st := range s.Structs {
		if err := st.check(enums, structs); err != nil {
			return err
		}
	}
	for _, st := range s.Structs {
		if slices.Contains(st.Classes, "sa") {
			if err := st.checkCompMask(structs); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkCompMask checks that no two components of an SA record claim the
// same component mask bit. A field without cm= that nests a structure
// contributes the bits of that structure's fields (an SMP attribute
// embedded in its record carries its bits in that record).
func (st *Struct) checkCompMask(structs map[string]*Struct) error {
	owner := map[int]string{}
	var walk func(s *Struct, prefix string) error
	walk = func(s *Struct, prefix string) error {
		for _, f := range s.Fields {
			if f.Name == "" {
				continue
			}
			if len(f.CompMask) == 0 {
				if f.Hint == "struct" && f.Count == 1 {
					if err := walk(structs[f.Ref], prefix+f.Name+"."); err != nil {
						return err
					}
				}
				continue
			}
			for _, bit := range f.CompMask {
				if o, dup := owner[bit]; dup {
					return fmt.Errorf("%s: %s: component mask bit %d of %s%s is also %s", f.pos, st.Name, bit, prefix, f.Name, o)
				}
				owner[bit] = prefix + f.Name
			}
		}
		return nil
	}
	return walk(st, "")
}

func (e *Enum) check() error {
	if len(e.Values) == 0 {
		return fmt.Errorf("no values")
	}
	var max uint64
	seen := map[uint64]bool{}
	names := map[string]bool{}
	for _, v := range e.Values {
		if seen[v.Value] || names[v.GoName] {
			return fmt.Errorf("value %d or name %s listed twice", v.Value, v.GoName)
		}
		seen[v.Value], names[v.GoName] = true, true
		if v.Value > max {
			max = v.Value
		}
	}
	need := "uint8"
	switch {
	case max > 0xffff:
		need = "uint32"
	case max > 0xff:
		need = "uint16"
	}
	if e.Type == "" {
		e.Type = need
	} else if typeBits(e.Type) < typeBits(need) {
		return fmt.Errorf("type %s is too small for value %d", e.Type, max)
	}
	if e.Unknown == "" {
		e.Unknown = "%d"
	}
	if n := strings.Count(e.Unknown, "%"); n > 1 || n == 1 && !strings.Contains(e.Unknown, "%d") {
		return fmt.Errorf(`unknown=%q: at most one %%, as %%d`, e.Unknown)
	}
	return nil
}

func typeBits(t string) int {
	switch t {
	case "uint8":
		return 8
	case "uint16":
		return 16
	case "uint32":
		return 32
	}
	return 64
}

func (st *Struct) check(enums map[string]*Enum, structs map[string]*Struct) error {
	bits := st.Size * 8
	owner := make([]string, bits) // which field holds each bit
	names := map[string]bool{}
	jsonNames := map[string]bool{}
	for _, f := range st.Fields {
		where := fmt.Sprintf("%s: %s.%s", f.pos, st.Name, f.Name)
		if f.Name != "" {
			if names[f.Name] || jsonNames[f.JSON] {
				return fmt.Errorf("%s: name or json name used twice", where)
			}
			names[f.Name], jsonNames[f.JSON] = true, true
		}
		if err := f.checkShape(enums, structs); err != nil {
			return fmt.Errorf("%s: %v", where, err)
		}
		if f.CMEach && len(f.CompMask) != f.Count {
			return fmt.Errorf("%s: cm gives %d bits for %d elements", where, len(f.CompMask), f.Count)
		}
		if f.Count > 1 && f.Stride < f.Width {
			return fmt.Errorf("%s: stride %d is less than width %d", where, f.Stride, f.Width)
		}
		end := f.Offset + (f.Count-1)*f.Stride + f.Width
		if end > bits {
			return fmt.Errorf("%s: bits %d..%d run past the %d-byte struct", where, f.Offset, end-1, st.Size)
		}
		if f.IBMADOff >= 0 && f.IBMADOff+f.Width > bits {
			return fmt.Errorf("%s: ibmadoff runs past the struct", where)
		}
		for i := 0; i < f.Count; i++ {
			start := f.Offset + i*f.Stride
			for b := start; b < start+f.Width; b++ {
				if owner[b] != "" {
					return fmt.Errorf("%s: bit %d is also in %s", where, b, owner[b])
				}
				owner[b] = f.Name
				if owner[b] == "" {
					owner[b] = "reserved"
				}
			}
		}
		if f.Label != "" && f.Count > 1 && !strings.Contains(f.Label, "%d") {
			span := (f.Count-1)*f.Stride + f.Width
			if span > 64 && f.IBMAD != "array" {
				return fmt.Errorf("%s: a whole-array label over %d bits needs ibmad=array", where, span)
			}
		}
	}
	return nil
}

// checkShape checks width against hint and sets Ref-dependent facts.
func (f *Field) checkShape(enums map[string]*Enum, structs map[string]*Struct) error {
	if f.Name == "" {
		return nil
	}
	switch f.Hint {
	case "dec", "hex":
		if f.Width > 64 {
			return fmt.Errorf("%s is at most 64 bits; use bytes", f.Hint)
		}
	case "guid":
		if f.Width != 64 {
			return fmt.Errorf("guid is 64 bits")
		}
	case "gid":
		if f.Width != 128 || f.Offset%8 != 0 {
			return fmt.Errorf("gid is 128 byte-aligned bits")
		}
	case "str", "bytes":
		if f.Width%8 != 0 || f.Offset%8 != 0 || f.Count != 1 {
			return fmt.Errorf("%s needs whole bytes, byte aligned, no count", f.Hint)
		}
	case "enum", "mask":
		e := enums[f.Ref]
		if e == nil {
			return fmt.Errorf("no enum %s", f.Ref)
		}
		if f.Width > typeBits(e.Type) {
			return fmt.Errorf("%d bits do not fit enum %s (%s)", f.Width, e.Name, e.Type)
		}
	case "struct":
		sub := structs[f.Ref]
		if sub == nil {
			return fmt.Errorf("no struct %s", f.Ref)
		}
		if f.Width != sub.Size*8 || f.Offset%8 != 0 || f.Stride%8 != 0 {
			return fmt.Errorf("struct %s is %d byte-aligned bits", sub.Name, sub.Size*8)
		}
	}
	if f.Count > 1 && f.Stride%8 != 0 && f.Hint == "struct" {
		return fmt.Errorf("struct arrays need byte strides")
	}
	return nil
}
