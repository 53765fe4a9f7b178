package mad

import (
	"fmt"
	"math/bits"
	"strconv"
	"strings"
)

// SA component masks (IBA 15.2.1.1, 15.2.5): every component of an SA
// record, reserved ones included, has a bit in the ComponentMask of a
// query, and the SA matches only the components whose bits are set. The
// bits come from the cm= column of the wire description; the records that
// embed an SMP attribute (PortInfoRecord, NodeRecord, SwitchInfoRecord,
// ...) take the bits of the attribute's fields.

// CompMask returns the component mask selecting the named fields of the SA
// record d: the bits of the fields a caller filled in. Paths are those of
// Get and Set ("DLID", "PortInfo.CapabilityMask", "GUIDInfo.GUID[3]"); a
// path that names a whole array of per-element components ("ServiceData8")
// selects all of them. A path ending in a structure that has no bit of its
// own, or in a field with no bit, is an error.
func CompMask(d *StructDesc, fields ...string) (uint64, error) {
	var mask uint64
	for _, path := range fields {
		m, err := d.compMask(path)
		if err != nil {
			return 0, err
		}
		mask |= m
	}
	return mask, nil
}

// MustCompMask is CompMask for fixed field lists (package variables): it
// panics on an error.
func MustCompMask(d *StructDesc, fields ...string) uint64 {
	m, err := CompMask(d, fields...)
	if err != nil {
		panic(err)
	}
	return m
}

func (d *StructDesc) compMask(path string) (uint64, error) {
	parts := pathParts(path)
	if len(parts) > 1 && strings.EqualFold(parts[0], d.Name) && d.Field(parts[0]) == nil {
		parts = parts[1:]
	}
	cur := d
	for i := 0; i < len(parts); i++ {
		f := cur.Field(parts[i])
		if f == nil {
			return 0, fmt.Errorf("mad: %s has no field %q", cur.Name, parts[i])
		}
		idx := -1
		if f.Count > 1 && i+1 < len(parts) {
			i++
			n, err := strconv.Atoi(parts[i])
			if err != nil || n < 0 || n >= f.Count {
				return 0, fmt.Errorf("mad: %s.%s: index %q not in 0..%d", cur.Name, f.Name, parts[i], f.Count-1)
			}
			idx = n
		}
		switch {
		case i+1 < len(parts) && f.Hint != HintStruct:
			return 0, fmt.Errorf("mad: %s.%s has no fields", cur.Name, f.Name)
		case f.CompMask != 0 && f.CompMaskEach && idx >= 0:
			return 1 << (bits.TrailingZeros64(f.CompMask) + idx), nil
		case f.CompMask != 0:
			return f.CompMask, nil // the whole field: one bit, or all of an array's
		case i+1 == len(parts):
			return 0, fmt.Errorf("mad: %s: %s.%s has no component mask bit", path, cur.Name, f.Name)
		}
		cur = f.Struct
	}
	return 0, fmt.Errorf("mad: empty field path")
}

// CompMaskFields names the components whose bits are set in mask, in bit
// order, as paths CompMask accepts ("DLID", "PortInfo.LID",
// "GUIDInfo.GUID[2]"); bits that name no field of d (reserved components)
// read "bit N". It is the inverse of CompMask, for traces.
func CompMaskFields(d *StructDesc, mask uint64) []string {
	names := map[int]string{}
	var walk func(d *StructDesc, prefix string)
	walk = func(d *StructDesc, prefix string) {
		for i := range d.Fields {
			f := &d.Fields[i]
			switch {
			case f.Reserved:
			case f.CompMask != 0 && f.CompMaskEach:
				low := bits.TrailingZeros64(f.CompMask)
				for e := 0; e < f.Count; e++ {
					names[low+e] = fmt.Sprintf("%s%s[%d]", prefix, f.Name, e)
				}
			case f.CompMask != 0:
				for m := f.CompMask; m != 0; m &= m - 1 {
					names[bits.TrailingZeros64(m)] = prefix + f.Name
				}
			case f.Hint == HintStruct && f.Count == 1:
				walk(f.Struct, prefix+f.Name+".")
			}
		}
	}
	walk(d, "")
	var out []string
	last := ""
	for m := mask; m != 0; m &= m - 1 {
		bit := bits.TrailingZeros64(m)
		name, ok := names[bit]
		if !ok {
			name = "bit " + strconv.Itoa(bit)
		}
		if name != last { // ServiceID: two bits, one field
			out = append(out, name)
		}
		last = name
	}
	return out
}
