package saquery

// The result: the decoded records, their JSON, and the text the C tool
// prints through each record type's label table (saDump).

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/ibtool/ibtool/internal/ctext"
	"github.com/ibtool/ibtool/internal/mad"
)

// saqueryResult is what saquery found: the SA's records decoded with
// their generated types. Its JSON is the value (the schema is at the top
// of saquery.go); writeText prints what the C tool prints, from the same
// decoded records.
type saqueryResult struct {
	Query         string             `json:"query"`
	Method        string             `json:"method,omitempty"`
	AttributeID   uint16             `json:"attribute_id,omitempty"`
	ComponentMask uint64             `json:"component_mask"`
	MaskFields    []string           `json:"component_mask_fields"`
	Records       []saRecord         `json:"records"`
	IsSMDisabled  *[]saRecord        `json:"is_sm_disabled,omitempty"`
	ClassPortInfo *mad.ClassPortInfo `json:"class_port_info,omitempty"`

	// How the text prints: a header, then each record as line or as
	// the dump as gives, else as its type's dump.
	header string
	line   func(r *saRecord) string
	as     *saDump
	cpi    *mad.ClassPortInfo // the SA's, when asked for (SwitchInfoRecord's MulticastFDBTop)
}

// saRecord is one record of the answer.
type saRecord struct {
	mad.Struct        // decoded with its generated type
	showKeys   bool   // -K: the JSON shows the secret fields
	name       string // NodeRecord: the node's name (node name map); -m: the member's node
	nameKey    string // the JSON key of name ("": name is not in the JSON)
	cProxyJoin uint8  // MCMemberRecord: the bit the C tool prints as ProxyJoin (see saCProxyJoin)
}

// MarshalJSON is the record's generated JSON, with name under nameKey.
func (r saRecord) MarshalJSON() ([]byte, error) {
	b := mad.JSON(r.Struct, r.showKeys)
	if r.nameKey == "" || len(b) < 2 {
		return b, nil
	}
	v, _ := json.Marshal(r.name)
	sep := ","
	if len(b) == 2 {
		sep = ""
	}
	return fmt.Appendf(b[:len(b)-1:len(b)-1], "%s%q:%s}", sep, r.nameKey, v), nil
}

func (res *saqueryResult) WriteText(w io.Writer) error {
	bw := bufio.NewWriter(w)
	if res.ClassPortInfo != nil {
		res.dump(bw, &saClassPortInfoDump, &saRecord{Struct: res.ClassPortInfo})
	}
	bw.WriteString(res.header)
	res.writeRecords(bw, res.Records)
	if res.IsSMDisabled != nil {
		bw.WriteString("\nIsSMdisabled ports\n")
		res.writeRecords(bw, *res.IsSMDisabled)
	}
	return bw.Flush()
}

func (res *saqueryResult) writeRecords(w *bufio.Writer, recs []saRecord) {
	for i := range recs {
		switch r := &recs[i]; {
		case res.line != nil:
			w.WriteString(res.line(r))
		case res.as != nil:
			res.dump(w, res.as, r)
		default:
			res.dump(w, saqueryTypeByAttr(r.Desc().AttrID).dump, r)
		}
	}
}

// saField is one line of a record's dump: the C tool's label, the field
// path in the record's generated structure and the printf format of its
// value. A path "A|B|C" names fields that share a byte or word, which the
// C tool prints as that one number (saPacked).
type saField struct {
	label, path, format string
	// value, when set, gives a value that is not one field of the
	// record (instead of path).
	value func(r *saRecord) any
	// when, when set, says whether the line prints at all.
	when   func(res *saqueryResult, r *saRecord) bool
	secret bool   // "<not displayed>" unless -K
	text   string // a line printed as is (a heading inside the dump)
}

// saDump is one record type's dump: its first lines, the width its
// labels are dotted to, its fields, and the table some print after them.
type saDump struct {
	title  string
	col    int
	fields []saField
	table  func(w *bufio.Writer, r *saRecord)
}

func (res *saqueryResult) dump(w *bufio.Writer, d *saDump, r *saRecord) {
	w.WriteString(d.title)
	for _, f := range d.fields {
		switch {
		case f.text != "":
			w.WriteString(f.text)
		case f.when != nil && !f.when(res, r):
		case f.secret && !r.showKeys:
			w.WriteString(saLine(d.col, f.label, "%s", "<not displayed>"))
		case f.value != nil:
			w.WriteString(saLine(d.col, f.label, f.format, f.value(r)))
		default:
			w.WriteString(saLine(d.col, f.label, f.format, saValue(r.Struct, f.path)))
		}
	}
	if d.table != nil {
		d.table(w, r)
	}
}

// saLine is one "\t\tlabel.....value" line, the label and dots col wide.
func saLine(col int, label, format string, args ...any) string {
	dots := ""
	if len(label) < col {
		dots = strings.Repeat(".", col-len(label))
	}
	return "\t\t" + label + dots + fmt.Sprintf(format, args...) + "\n"
}

// saValue is field path of s as the dumps print it: GIDs as inet_ntop
// text, strings up to their NUL, other bytes as bytes, numbers as uint64.
func saValue(s mad.Struct, path string) any {
	if strings.Contains(path, "|") {
		return saPacked(s, strings.Split(path, "|"))
	}
	f, _ := saFieldAt(s.Desc(), path)
	if f.IsNumber() {
		v, _ := mad.Get(s, path)
		return v
	}
	b, _ := mad.GetBytes(s, path)
	switch f.Hint {
	case mad.HintGID:
		return ctext.InetNtop6([16]byte(b))
	case mad.HintString:
		return ctext.CString(b)
	}
	return b
}

// saPacked is fields that share bytes read as the C tool reads them, one
// number from the first field's start to the byte that ends the last;
// reserved bits in between read 0, as a sender sets reserved bits.
func saPacked(s mad.Struct, paths []string) uint64 {
	last, lastOff := saFieldAt(s.Desc(), paths[len(paths)-1])
	end := (lastOff + last.Width + 7) &^ 7
	var v uint64
	for _, p := range paths {
		f, off := saFieldAt(s.Desc(), p)
		x, _ := mad.Get(s, p)
		v |= x << (end - off - f.Width)
	}
	return v
}

// saFieldAt finds a field path ("NodeInfo.NodeGUID", "GUIDInfo.GUID[3]")
// in d: the field, and its bit offset in d. The tables' paths are fixed,
// so a bad one is a bug the tests catch.
func saFieldAt(d *mad.StructDesc, path string) (*mad.FieldDesc, int) {
	var f *mad.FieldDesc
	off := 0
	for _, part := range strings.Split(path, ".") {
		name, idx, _ := strings.Cut(strings.TrimSuffix(part, "]"), "[")
		if f != nil {
			d = f.Struct
		}
		if f = d.Field(name); f == nil {
			panic("saquery: no field " + path + " in " + d.Name)
		}
		off += f.Offset
		if i, err := strconv.Atoi(idx); err == nil {
			off += i * f.Stride
		}
	}
	return f, off
}

// saEach is the lines of an array field, one per element: label and path
// take the element's index (the label's counted from first).
func saEach(label, path string, n, first int, format string) []saField {
	var fs []saField
	for i := 0; i < n; i++ {
		fs = append(fs, saField{label: fmt.Sprintf(label, i+first), path: fmt.Sprintf(path, i), format: format})
	}
	return fs
}

func saHeading(s string) saField { return saField{text: s} }

// saZero is a reserved field the C tool prints: the decoded record has no
// reserved bits, and a sender sets them to 0.
func saZero(*saRecord) any { return 0 }
