// Package specgen reads the wire description in internal/mad/spec and
// writes the Go code generated from it. The format is documented in
// spec/00-format.spec.
package specgen

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Spec is every enum and struct of the description, in file order.
type Spec struct {
	Enums   []*Enum
	Structs []*Struct
}

// Enum is an "enum ... end" block.
type Enum struct {
	Name    string
	Doc     []string
	Type    string // Go type: uint8, uint16 or uint32
	Unknown string // Printf format for unlisted values
	Values  []EnumValue
	pos     string
}

// EnumValue is one line of an enum.
type EnumValue struct {
	Value   uint64
	GoName  string
	Text    string
	Comment string
}

// Struct is a "struct ... end" block.
type Struct struct {
	Name    string
	Doc     []string
	Size    int // bytes
	Classes []string
	AttrID  int // -1: not an attribute
	Methods []string
	Section string
	Fields  []*Field
	pos     string
}

// Field is one field line.
type Field struct {
	Name     string // "" for reserved bits
	Offset   int    // bits
	Width    int    // bits of one element
	Hint     string // dec, hex, guid, gid, str, bytes, enum, mask, struct
	Ref      string // the enum or struct of enum:, mask:, struct:
	Label    string // libibmad label, "" if none
	Count    int
	Stride   int
	IBMAD    string // libibmad formatter
	IBMADOff int    // -1: Offset
	Group    string
	Key      bool
	CompMask []int // SA component mask bits, none if empty
	CMEach   bool  // CompMask has one bit per element (cm=A..B)
	JSON     string
	Comment  string
	pos      string
}

// IBMADFormatters are the formatter names the runtime implements
// (internal/mad/ibmad.go).
var IBMADFormatters = map[string]bool{
	"uint": true, "int": true, "hex": true, "array": true, "string": true,
	"enum": true, "capmask": true, "linkwidthen": true, "linkwidthsup": true,
	"linkspeedsup": true, "linkspeeden": true, "linkspeedextsup": true,
	"linkspeedexten": true, "linkspeedext2bits": true,
}

var defaultIBMAD = map[string]string{
	"dec": "uint", "hex": "hex", "guid": "hex", "gid": "array", "str": "string",
	"bytes": "array", "enum": "enum", "mask": "hex", "struct": "array",
}

// ParseDir reads every *.spec file of dir in name order.
func ParseDir(dir string) (*Spec, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.spec"))
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	if len(names) == 0 {
		return nil, fmt.Errorf("no .spec files in %s", dir)
	}
	spec := &Spec{}
	for _, name := range names {
		data, err := os.ReadFile(name)
		if err != nil {
			return nil, err
		}
		if err := spec.parse(filepath.Base(name), string(data)); err != nil {
			return nil, err
		}
	}
	if err := spec.check(); err != nil {
		return nil, err
	}
	return spec, nil
}

// Parse reads one spec text (for tests); file names positions in errors.
func Parse(file, text string) (*Spec, error) {
	spec := &Spec{}
	if err := spec.parse(file, text); err != nil {
		return nil, err
	}
	if err := spec.check(); err != nil {
		return nil, err
	}
	return spec, nil
}

func (s *Spec) parse(file, text string) error {
	var doc []string
	var enum *Enum
	var st *Struct
	for i, raw := range strings.Split(text, "\n") {
		pos := fmt.Sprintf("%s:%d", file, i+1)
		words, comment, err := tokenize(raw)
		if err != nil {
			return fmt.Errorf("%s: %v", pos, err)
		}
		if len(words) == 0 {
			if strings.HasPrefix(strings.TrimSpace(raw), "#") && enum == nil && st == nil {
				doc = append(doc, comment)
			} else {
				doc = nil
			}
			continue
		}
		switch {
		case words[0] == "end":
			if enum == nil && st == nil {
				return fmt.Errorf("%s: end without enum or struct", pos)
			}
			enum, st = nil, nil
		case enum != nil:
			v, err := parseEnumValue(words, comment)
			if err != nil {
				return fmt.Errorf("%s: %v", pos, err)
			}
			enum.Values = append(enum.Values, v)
		case st != nil:
			f, err := parseField(words, comment)
			if err != nil {
				return fmt.Errorf("%s: %v", pos, err)
			}
			f.pos = pos
			st.Fields = append(st.Fields, f)
		case words[0] == "enum":
			e, err := parseEnumHeader(words)
			if err != nil {
				return fmt.Errorf("%s: %v", pos, err)
			}
			e.Doc, e.pos = doc, pos
			s.Enums = append(s.Enums, e)
			enum = e
		case words[0] == "struct":
			t, err := parseStructHeader(words)
			if err != nil {
				return fmt.Errorf("%s: %v", pos, err)
			}
			t.Doc, t.pos = doc, pos
			s.Structs = append(s.Structs, t)
			st = t
		default:
			return fmt.Errorf("%s: expected enum or struct, found %q", pos, words[0])
		}
		doc = nil
	}
	if enum != nil || st != nil {
		return fmt.Errorf("%s: missing end", file)
	}
	return nil
}

// tokenize splits a line into words ("quoted text" is one word, without the
// quotes) and the comment after '#'.
func tokenize(line string) (words []string, comment string, err error) {
	for i := 0; i < len(line); {
		c := line[i]
		switch {
		case c == ' ' || c == '\t' || c == '\r':
			i++
		case c == '#':
			return words, strings.TrimSpace(line[i+1:]), nil
		case c == '"':
			end := strings.IndexByte(line[i+1:], '"')
			if end < 0 {
				return nil, "", fmt.Errorf("unterminated quote")
			}
			words = append(words, "\x00"+line[i+1:i+1+end]) // \x00 marks quoted
			i += end + 2
		default:
			j := i
			for j < len(line) && line[j] != ' ' && line[j] != '\t' && line[j] != '\r' && line[j] != '#' {
				if line[j] == '"' { // key="value"
					end := strings.IndexByte(line[j+1:], '"')
					if end < 0 {
						return nil, "", fmt.Errorf("unterminated quote")
					}
					j += end + 2
					continue
				}
				j++
			}
			words = append(words, line[i:j])
			i = j
		}
	}
	return words, "", nil
}

func unquote(w string) string {
	if strings.HasPrefix(w, "\x00") {
		return w[1:]
	}
	return strings.Trim(w, `"`)
}

// options splits key=value words; bare words map to "".
func options(words []string) (map[string]string, error) {
	opts := map[string]string{}
	for _, w := range words {
		k, v, _ := strings.Cut(w, "=")
		if _, dup := opts[k]; dup {
			return nil, fmt.Errorf("option %s given twice", k)
		}
		opts[k] = unquote(v)
	}
	return opts, nil
}

func parseEnumHeader(words []string) (*Enum, error) {
	if len(words) < 2 || !isIdent(words[1]) {
		return nil, fmt.Errorf("enum needs a name")
	}
	e := &Enum{Name: words[1]}
	opts, err := options(words[2:])
	if err != nil {
		return nil, err
	}
	for k, v := range opts {
		switch k {
		case "type":
			if v != "uint8" && v != "uint16" && v != "uint32" {
				return nil, fmt.Errorf("enum type %q: want uint8, uint16 or uint32", v)
			}
			e.Type = v
		case "unknown":
			e.Unknown = v
		default:
			return nil, fmt.Errorf("unknown enum option %q", k)
		}
	}
	return e, nil
}

func parseEnumValue(words []string, comment string) (EnumValue, error) {
	if len(words) != 3 || !strings.HasPrefix(words[2], "\x00") {
		return EnumValue{}, fmt.Errorf(`enum value: want VALUE GONAME "TEXT"`)
	}
	v, err := strconv.ParseUint(words[0], 0, 32)
	if err != nil {
		return EnumValue{}, fmt.Errorf("enum value %q: %v", words[0], err)
	}
	if !isIdentPart(words[1]) {
		return EnumValue{}, fmt.Errorf("enum value name %q is not a Go identifier part", words[1])
	}
	return EnumValue{Value: v, GoName: words[1], Text: unquote(words[2]), Comment: comment}, nil
}

func parseStructHeader(words []string) (*Struct, error) {
	if len(words) < 2 || !isIdent(words[1]) {
		return nil, fmt.Errorf("struct needs a name")
	}
	st := &Struct{Name: words[1], AttrID: -1}
	opts, err := options(words[2:])
	if err != nil {
		return nil, err
	}
	for k, v := range opts {
		switch k {
		case "size":
			st.Size, err = strconv.Atoi(v)
			if err != nil || st.Size <= 0 {
				return nil, fmt.Errorf("bad size %q", v)
			}
		case "class":
			st.Classes = strings.Split(v, ",")
			for _, c := range st.Classes {
				if _, ok := classConsts[c]; !ok {
					return nil, fmt.Errorf("unknown class %q", c)
				}
			}
		case "attr":
			id, err := strconv.ParseUint(v, 0, 16)
			if err != nil {
				return nil, fmt.Errorf("bad attr %q", v)
			}
			st.AttrID = int(id)
		case "methods":
			st.Methods = strings.Split(v, ",")
			for _, m := range st.Methods {
				if _, ok := methodConsts[m]; !ok {
					return nil, fmt.Errorf("unknown method %q", m)
				}
			}
		case "sect":
			st.Section = v
		default:
			return nil, fmt.Errorf("unknown struct option %q", k)
		}
	}
	if st.Size == 0 {
		return nil, fmt.Errorf("struct %s needs size=BYTES", st.Name)
	}
	if (st.AttrID >= 0) != (len(st.Classes) > 0) {
		return nil, fmt.Errorf("struct %s: give class and attr together", st.Name)
	}
	return st, nil
}

func parseField(words []string, comment string) (*Field, error) {
	f := &Field{Count: 1, IBMADOff: -1, Comment: comment}
	if words[0] == "reserved" {
		if len(words) != 3 {
			return nil, fmt.Errorf("reserved: want reserved OFFSET WIDTH")
		}
	} else if len(words) < 5 {
		return nil, fmt.Errorf("field: want NAME OFFSET WIDTH HINT LABEL [OPTION...]")
	} else if !isIdent(words[0]) {
		return nil, fmt.Errorf("field name %q is not a Go identifier", words[0])
	} else {
		f.Name = words[0]
	}
	var err error
	if f.Offset, err = strconv.Atoi(words[1]); err != nil || f.Offset < 0 {
		return nil, fmt.Errorf("bad offset %q", words[1])
	}
	if f.Width, err = strconv.Atoi(words[2]); err != nil || f.Width <= 0 {
		return nil, fmt.Errorf("bad width %q", words[2])
	}
	f.Stride = f.Width
	if f.Name == "" {
		return f, nil
	}
	f.Hint, f.Ref, _ = strings.Cut(words[3], ":")
	if _, ok := defaultIBMAD[f.Hint]; !ok {
		return nil, fmt.Errorf("unknown hint %q", f.Hint)
	}
	needsRef := f.Hint == "enum" || f.Hint == "mask" || f.Hint == "struct"
	if needsRef != (f.Ref != "") {
		return nil, fmt.Errorf("hint %q: enum:, mask: and struct: take a name, others none", words[3])
	}
	if words[4] != "-" {
		f.Label = words[4]
	}
	f.IBMAD = defaultIBMAD[f.Hint]
	opts, err := options(words[5:])
	if err != nil {
		return nil, err
	}
	for k, v := range opts {
		switch k {
		case "count":
			if f.Count, err = strconv.Atoi(v); err != nil || f.Count < 1 {
				return nil, fmt.Errorf("bad count %q", v)
			}
		case "stride":
			if f.Stride, err = strconv.Atoi(v); err != nil || f.Stride < 1 {
				return nil, fmt.Errorf("bad stride %q", v)
			}
		case "ibmad":
			if !IBMADFormatters[v] {
				return nil, fmt.Errorf("unknown libibmad formatter %q", v)
			}
			f.IBMAD = v
		case "ibmadoff":
			if f.IBMADOff, err = strconv.Atoi(v); err != nil || f.IBMADOff < 0 {
				return nil, fmt.Errorf("bad ibmadoff %q", v)
			}
		case "group":
			f.Group = v
		case "key":
			f.Key = true
		case "cm":
			if f.CompMask, f.CMEach, err = parseCompMask(v); err != nil {
				return nil, err
			}
		case "json":
			f.JSON = v
		default:
			return nil, fmt.Errorf("unknown field option %q", k)
		}
	}
	if f.JSON == "" {
		f.JSON = SnakeCase(f.Name)
	}
	return f, nil
}

// parseCompMask reads a cm= value: "N" (one bit), "N,M,..." (several bits,
// all set for the field) or "A..B" (bit A+i for element i of an array).
func parseCompMask(v string) (bits []int, each bool, err error) {
	bit := func(s string) (int, error) {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 || n > 63 {
			return 0, fmt.Errorf("bad cm %q: bits are 0..63", v)
		}
		return n, nil
	}
	if lo, hi, ok := strings.Cut(v, ".."); ok {
		a, err := bit(lo)
		if err != nil {
			return nil, false, err
		}
		b, err := bit(hi)
		if err != nil || b < a {
			return nil, false, fmt.Errorf("bad cm %q: want A..B with A <= B <= 63", v)
		}
		for n := a; n <= b; n++ {
			bits = append(bits, n)
		}
		return bits, true, nil
	}
	for _, part := range strings.Split(v, ",") {
		n, err := bit(part)
		if err != nil {
			return nil, false, err
		}
		bits = append(bits, n)
	}
	return bits, false, nil
}

var classConsts = map[string][]string{
	"smp":  {"ClassSubnLID", "ClassSubnDR"},
	"sa":   {"ClassSubnAdm"},
	"perf": {"ClassPerf"},
	"cc":   {"ClassCongest"},
	// vendor classes: Mellanox (range 1), OFA ping and sysstat (range 2)
	"mlnx":       {"ClassVendorMlnx"},
	"ofaping":    {"ClassVendorOFA"},
	"ofasysstat": {"ClassVendorOFASysStat"},
}

var methodConsts = map[string]string{
	"Get": "MethodGet", "Set": "MethodSet", "Send": "MethodSend",
	"Trap": "MethodTrap", "Report": "MethodReport", "TrapRepress": "MethodTrapRepres",
	"GetTable": "MethodGetTable", "GetTraceTable": "MethodGetTraceTable",
	"GetMulti": "MethodGetMulti", "Delete": "MethodDelete",
}

func isIdent(s string) bool {
	if s == "" || !(s[0] >= 'A' && s[0] <= 'Z' || s[0] >= 'a' && s[0] <= 'z') {
		return false
	}
	return isIdentPart(s)
}

func isIdentPart(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if !(c == '_' || c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z') {
			return false
		}
	}
	return true
}

// SnakeCase turns a Go name into a JSON name: NodeGUID -> node_guid,
// PKeyViolations -> p_key_violations, VL15Dropped -> vl15_dropped.
func SnakeCase(name string) string {
	var b strings.Builder
	r := []rune(name)
	for i, c := range r {
		upper := c >= 'A' && c <= 'Z'
		if upper && i > 0 {
			prev := r[i-1]
			prevLower := prev >= 'a' && prev <= 'z' || prev >= '0' && prev <= '9'
			nextLower := i+1 < len(r) && r[i+1] >= 'a' && r[i+1] <= 'z'
			prevUpper := prev >= 'A' && prev <= 'Z'
			if prevLower || prevUpper && nextLower {
				b.WriteByte('_')
			}
		}
		if upper {
			c += 'a' - 'A'
		}
		b.WriteRune(c)
	}
	return b.String()
}
