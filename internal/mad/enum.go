package mad

import (
	"fmt"
	"strings"
)

// EnumDesc is the table of an enumeration of the description: its values
// and libibmad's text for each.
type EnumDesc struct {
	Name    string
	Unknown string // text for values the table lacks; a %d in it is the value
	Values  []EnumValue
}

// EnumValue is one named value.
type EnumValue struct {
	Value uint64
	Name  string // Go constant suffix
	Text  string // libibmad's text
}

// Text returns the text for v, or the Unknown format applied to v.
func (e *EnumDesc) Text(v uint64) string {
	for _, ev := range e.Values {
		if ev.Value == v {
			return ev.Text
		}
	}
	if strings.Contains(e.Unknown, "%d") {
		return fmt.Sprintf(e.Unknown, v)
	}
	return e.Unknown
}

// Lookup returns the value whose text or name equals s (case-insensitive).
func (e *EnumDesc) Lookup(s string) (uint64, bool) {
	for _, ev := range e.Values {
		if strings.EqualFold(ev.Text, s) || strings.EqualFold(ev.Name, s) {
			return ev.Value, true
		}
	}
	return 0, false
}

// MaskTexts returns the texts of the values that are single bits set in
// mask, lowest bit first.
func (e *EnumDesc) MaskTexts(mask uint64) []string {
	var out []string
	for bit := uint(0); bit < 64; bit++ {
		if mask&(1<<bit) == 0 {
			continue
		}
		for _, ev := range e.Values {
			if ev.Value == 1<<bit {
				out = append(out, ev.Text)
			}
		}
	}
	return out
}

// Enums returns the tables of every enumeration of the description.
func Enums() []*EnumDesc { return enumDescs }
