package mad

import (
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
)

// Struct is implemented by every generated wire structure.
type Struct interface {
	// Desc returns the structure's field table.
	Desc() *StructDesc
	// Marshal encodes the structure into the first Desc().Size bytes of b.
	Marshal(b []byte) error
	// Unmarshal decodes the first Desc().Size bytes of b.
	Unmarshal(b []byte) error
}

// Hint says how a field's value reads (spec HINT column).
type Hint uint8

const (
	HintDec    Hint = iota // a number, printed in decimal
	HintHex                // a number, printed in hex
	HintGUID               // a 64-bit GUID
	HintGID                // a 128-bit GID
	HintString             // NUL-padded text
	HintBytes              // opaque bytes
	HintEnum               // one value of FieldDesc.Enum
	HintMask               // a set of FieldDesc.Enum's bits
	HintStruct             // a nested FieldDesc.Struct
)

var hintNames = [...]string{"dec", "hex", "guid", "gid", "str", "bytes", "enum", "mask", "struct"}

func (h Hint) String() string {
	if int(h) < len(hintNames) {
		return hintNames[h]
	}
	return "hint(" + strconv.Itoa(int(h)) + ")"
}

// FieldDesc describes one field (or reserved range) of a structure.
// Offsets and widths are in bits, numbered as in the IBA tables (bit 0 is
// the most significant bit of byte 0).
type FieldDesc struct {
	Name        string      // Go field name; "" if Reserved
	JSONName    string      // snake_case JSON name
	Offset      int         // bit offset of the first element
	Width       int         // bits of one element
	Count       int         // elements (1 for a scalar)
	Stride      int         // bits from one element to the next
	Hint        Hint        // how the value reads
	Enum        *EnumDesc   // for HintEnum and HintMask
	Struct      *StructDesc // for HintStruct
	Label       string      // libibmad's print label; "" if it prints none
	IBMAD       string      // libibmad formatter name (see ibmad.go)
	IBMADOffset int         // where libibmad reads the label's value (usually Offset)
	Group       string      // printed by Dotted only when asked for
	Key         bool        // a secret, hidden by Dotted unless asked for
	Reserved    bool        // bits with no meaning
	// CompMask holds the SA component mask bits of the field (0: none;
	// see CompMask). In a structure embedded in an SA record, such as
	// PortInfo in PortInfoRecord, they are the bits in that record.
	CompMask uint64
	// CompMaskEach says the field is an array whose element e has the
	// bit CompMask's lowest bit + e (ServiceData8, GUIDInfo.GUID).
	CompMaskEach bool
}

// Span returns the bits from the first element's start to the last's end.
func (f *FieldDesc) Span() int { return (f.Count-1)*f.Stride + f.Width }

// IsNumber reports whether one element of f is a number of at most 64 bits.
func (f *FieldDesc) IsNumber() bool {
	switch f.Hint {
	case HintDec, HintHex, HintGUID, HintEnum, HintMask:
		return true
	}
	return false
}

// StructDesc describes a structure: its size, where it travels and its
// fields in the description's order (libibmad's print order).
type StructDesc struct {
	Name        string
	Size        int    // bytes
	AttrID      uint16 // valid if IsAttribute
	IsAttribute bool
	Classes     []uint8 // management classes that carry it
	Methods     []uint8 // methods it is used with
	Section     string  // IBA section
	Fields      []FieldDesc
	New         func() Struct // a new zero value
}

// Field returns the field named name (Go or JSON name, any case), or nil.
func (d *StructDesc) Field(name string) *FieldDesc {
	for i := range d.Fields {
		f := &d.Fields[i]
		if !f.Reserved && (strings.EqualFold(f.Name, name) || strings.EqualFold(f.JSONName, name)) {
			return f
		}
	}
	return nil
}

// Structs returns every structure of the description.
func Structs() []*StructDesc { return structDescs }

// LookupStruct returns the structure named name (any case), or nil.
func LookupStruct(name string) *StructDesc {
	for _, d := range structDescs {
		if strings.EqualFold(d.Name, name) {
			return d
		}
	}
	return nil
}

// LookupAttr returns the structure of attribute attrID in class, or nil.
func LookupAttr(class uint8, attrID uint16) *StructDesc {
	for _, d := range structDescs {
		if !d.IsAttribute || d.AttrID != attrID {
			continue
		}
		for _, c := range d.Classes {
			if c == class {
				return d
			}
		}
	}
	return nil
}

// Encode returns s marshaled into a new buffer of its size.
func Encode(s Struct) []byte {
	b := make([]byte, s.Desc().Size)
	if err := s.Marshal(b); err != nil {
		panic(err) // cannot happen: b has the size Marshal needs
	}
	return b
}

// fieldRef is a resolved field path: a field, and the bits it names.
type fieldRef struct {
	f     *FieldDesc
	off   int  // absolute bit offset
	width int  // bits named
	whole bool // the whole array of a field with Count > 1
}

// resolve finds a dotted field path in d: "LinkWidthActive",
// "PortInfo.LinkWidthActive", "GUID.3" or "GUID[3]", "Entry[2].Weight".
// Names match Go or JSON names in any case.
func (d *StructDesc) resolve(path string) (fieldRef, error) {
	parts := pathParts(path)
	if len(parts) > 1 && strings.EqualFold(parts[0], d.Name) && d.Field(parts[0]) == nil {
		parts = parts[1:]
	}
	cur, off := d, 0
	for i := 0; i < len(parts); i++ {
		f := cur.Field(parts[i])
		if f == nil {
			return fieldRef{}, fmt.Errorf("mad: %s has no field %q", cur.Name, parts[i])
		}
		off += f.Offset
		if f.Count > 1 {
			if i+1 == len(parts) {
				return fieldRef{f: f, off: off, width: f.Span(), whole: true}, nil
			}
			i++
			idx, err := strconv.Atoi(parts[i])
			if err != nil || idx < 0 || idx >= f.Count {
				return fieldRef{}, fmt.Errorf("mad: %s.%s: index %q not in 0..%d", cur.Name, f.Name, parts[i], f.Count-1)
			}
			off += idx * f.Stride
		}
		if i+1 == len(parts) {
			return fieldRef{f: f, off: off, width: f.Width}, nil
		}
		if f.Hint != HintStruct {
			return fieldRef{}, fmt.Errorf("mad: %s.%s has no fields", cur.Name, f.Name)
		}
		cur = f.Struct
	}
	return fieldRef{}, fmt.Errorf("mad: empty field path")
}

// pathParts splits a field path, "a[3].b" as "a.3.b", into its parts.
func pathParts(path string) []string {
	return strings.Split(strings.Map(func(r rune) rune {
		switch r {
		case '[':
			return '.'
		case ']':
			return -1
		}
		return r
	}, path), ".")
}

// Get returns the number in field path of s (see FieldDesc.IsNumber).
func Get(s Struct, path string) (uint64, error) {
	ref, err := s.Desc().resolve(path)
	if err != nil {
		return 0, err
	}
	if ref.whole || !ref.f.IsNumber() {
		return 0, fmt.Errorf("mad: %s is not a number; use GetBytes", path)
	}
	return getBits(Encode(s), ref.off, ref.width), nil
}

// Set stores v in the number field path of s.
func Set(s Struct, path string, v uint64) error {
	ref, err := s.Desc().resolve(path)
	if err != nil {
		return err
	}
	if ref.whole || !ref.f.IsNumber() {
		return fmt.Errorf("mad: %s is not a number; use SetBytes", path)
	}
	if ref.width < 64 && v>>ref.width != 0 {
		return fmt.Errorf("mad: %d does not fit the %d bits of %s", v, ref.width, path)
	}
	b := Encode(s)
	putBits(b, ref.off, ref.width, v)
	return s.Unmarshal(b)
}

// GetBytes returns the wire bytes of a byte-aligned field path of s
// (GIDs, strings, nested structures, whole arrays).
func GetBytes(s Struct, path string) ([]byte, error) {
	ref, err := s.Desc().resolve(path)
	if err != nil {
		return nil, err
	}
	if ref.off%8 != 0 || ref.width%8 != 0 {
		return nil, fmt.Errorf("mad: %s is not byte aligned; use Get", path)
	}
	b := Encode(s)
	return append([]byte(nil), b[ref.off/8:(ref.off+ref.width)/8]...), nil
}

// SetBytes stores v, which must have the field's length, in a byte-aligned
// field path of s.
func SetBytes(s Struct, path string, v []byte) error {
	ref, err := s.Desc().resolve(path)
	if err != nil {
		return err
	}
	if ref.off%8 != 0 || ref.width%8 != 0 {
		return fmt.Errorf("mad: %s is not byte aligned; use Set", path)
	}
	if len(v) != ref.width/8 {
		return fmt.Errorf("mad: %s is %d bytes, got %d", path, ref.width/8, len(v))
	}
	b := Encode(s)
	copy(b[ref.off/8:], v)
	return s.Unmarshal(b)
}

// SetText parses text as the field's hint reads it and stores it: numbers
// in Go syntax (12, 0x1f), enum values by number, name or libibmad text,
// GUIDs in hex, GIDs in IPv6 form, strings as text (NUL padded) and bytes
// as hex digits.
func SetText(s Struct, path, text string) error {
	ref, err := s.Desc().resolve(path)
	if err != nil {
		return err
	}
	if ref.whole {
		return fmt.Errorf("mad: %s is an array; set one element", path)
	}
	switch ref.f.Hint {
	case HintGID:
		var g GID
		if err := g.UnmarshalText([]byte(text)); err != nil {
			return err
		}
		return SetBytes(s, path, g[:])
	case HintString:
		if len(text) > ref.width/8 {
			return fmt.Errorf("mad: %q is longer than the %d bytes of %s", text, ref.width/8, path)
		}
		v := make([]byte, ref.width/8)
		copy(v, text)
		return SetBytes(s, path, v)
	case HintBytes, HintStruct:
		v, err := hex.DecodeString(strings.TrimPrefix(text, "0x"))
		if err != nil {
			return fmt.Errorf("mad: %s takes hex digits: %v", path, err)
		}
		return SetBytes(s, path, v)
	case HintGUID:
		var g GUID
		if err := g.UnmarshalText([]byte(text)); err != nil {
			return err
		}
		return Set(s, path, uint64(g))
	case HintEnum:
		if v, ok := ref.f.Enum.Lookup(text); ok {
			return Set(s, path, v)
		}
	}
	v, err := strconv.ParseUint(text, 0, 64)
	if err != nil {
		return fmt.Errorf("mad: %s: %q is not a number", path, text)
	}
	return Set(s, path, v)
}
