package decodemad

// decode_mad (python-rdma's ibtool command): decode MADs given as text.
//
// Input, on stdin or in the files named: hex digits, with any whitespace,
// colons or commas between them and an optional 0x before each group
// ("01 81 01 81", "0x0181:0181", libibmad's "0181 0181" dumps), or one
// python-escaped string in quotes ('\x01\x81...', as python-rdma accepts
// it). A line "--" separates MADs (testdata captures hold several).
// -o/--offset skips bytes first; --umad strips the kernel's 64-byte
// struct ib_user_mad_hdr (as read from /dev/infiniband/umadN); -l says the
// data is a whole packet: LRH, GRH (when the LRH's LNH says so), BTH and,
// for unreliable datagrams, DETH come before the MAD.
//
// Output, for each MAD: a summary line (method, attribute, status), the
// headers field by field (the SMP header with its M_Key and directed
// route fields, then both paths; the SA header with its RMPP part, and the
// component mask's field names; the CC header with its CC_Key; the vendor
// range 2 header with its OUI; the common header for the other classes),
// and the attribute in mad.Dump's layout (offsets relative to the
// attribute; each title says where it starts in the MAD); an SA table
// response shows every record. -v adds the umad and link headers and
// libibmad's dotted form of the attribute, -vv the input bytes in hex.
//
// JSON (--json): {"mads": [{"summary", "umad" (with --umad: agent_id,
// status, timeout_ms, retries, length, qpn, qkey, lid, sl, path_bits,
// grh_present, gid_index, hop_limit, traffic_class, gid, flow_label,
// pkey_index), "lrh", "grh", "bth", "deth" (with -l; mad's JSON),
// "mad_header" (mad's MADHeader JSON), "smp" ({"m_key", and for directed
// routes "direction", "dr_slid", "dr_dlid", "hop_pointer", "hop_count",
// "initial_path", "return_path"}), "sa_header" (SAHeader JSON),
// "component_mask_fields", "cc_header", "vendor_header", "vendor_oui",
// "attribute_text" (the attribute's name), "attribute" (its JSON), "records" (an SA
// table's records), "data" (hex, when the attribute has no decoder)}]}.

import (
	"bufio"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/internal/cli/cmdutil"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/sa"
	"github.com/ibtool/ibtool/internal/umad"
)

type DecodeMADOptions struct {
	Verbose int
	offset  int
	lrh     bool
	Umad    bool
	json    bool
}

// NewCmd builds the decode_mad command.
func NewCmd(env *cmdutil.Env, _ string) *cobra.Command {
	opts := &DecodeMADOptions{}
	cmd := cmdutil.ToolCommand("decode_mad [options] [file...]", "Decode MADs given in hex on stdin")
	cmd.Long = "decode_mad reads MADs as hex text (or python-escaped strings) and prints them decoded:\n" +
		"the common header, the class header and the attribute, field by field. A line \"--\" separates MADs."
	cmd.Example = `  echo 0101 0102 ... | decode_mad
  ibtool decode_mad --umad -v < umad-frame.hex
  ibtool decode_mad --json internal/mad/testdata/capture/tiny_nodeinfo_ca.mad`
	fs := cmd.Flags()
	fs.CountVarP(&opts.Verbose, "verbose", "v", "more detail: -v the umad header and libibmad's dotted form, -vv the input bytes")
	fs.IntVarP(&opts.offset, "offset", "o", 0, "skip this many bytes of the input before decoding")
	fs.BoolVarP(&opts.lrh, "lrh", "l", false, "the data starts at the LRH, not the MAD header")
	fs.BoolVar(&opts.Umad, "umad", false, "the data starts with a kernel umad header (from /dev/infiniband/umadN)")
	fs.BoolVar(&opts.json, "json", false, "print the result as JSON")
	fs.SortFlags = false
	cmd.RunE = func(c *cobra.Command, args []string) error {
		return runDecodeMAD(env, opts, args)
	}
	return cmd
}

func runDecodeMAD(env *cmdutil.Env, opts *DecodeMADOptions, files []string) error {
	if opts.offset < 0 {
		return cmdutil.UsageErrorf("-o: the offset must not be negative")
	}
	text, err := readMADInput(env, files)
	if err != nil {
		return err
	}
	blobs, err := ParseMADText(string(text))
	if err != nil {
		return err
	}
	if len(blobs) == 0 {
		return errors.New("no MAD in the input")
	}
	res := &decodeMADResult{}
	for i, b := range blobs {
		d, err := DecodeMADBytes(b, opts)
		if err != nil {
			if len(blobs) > 1 {
				err = fmt.Errorf("MAD %d: %w", i+1, err)
			}
			return err
		}
		res.MADs = append(res.MADs, d)
	}
	return cmdutil.Finish(env, &cmdutil.Common{JSON: opts.json}, "decode_mad", res, nil)
}

// readMADInput reads the files named, a "--" line after each, or stdin.
func readMADInput(env *cmdutil.Env, files []string) ([]byte, error) {
	if len(files) == 0 {
		if f, ok := env.IO.In.(*os.File); ok {
			if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
				fmt.Fprintln(env.IO.Err, "Input the MAD in HEX followed by Ctrl-D")
			}
		}
		return io.ReadAll(env.IO.In)
	}
	var text []byte
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			return nil, err
		}
		text = append(append(text, b...), "\n--\n"...)
	}
	return text, nil
}

// decodeMADResult is decode_mad's output: the MADs, their texts a blank
// line apart.
type decodeMADResult struct {
	MADs []*decodedMAD `json:"mads"`
}

func (r *decodeMADResult) WriteText(w io.Writer) error {
	var t strings.Builder
	for i, d := range r.MADs {
		if i > 0 {
			t.WriteString("\n")
		}
		d.Render(&t)
	}
	return cmdutil.WriteString(w, t.String())
}

// ParseMADText turns the input into the bytes of each MAD it holds.
func ParseMADText(s string) ([][]byte, error) {
	var blobs [][]byte
	var cur []string
	flush := func() error {
		chunk := strings.TrimSpace(strings.Join(cur, "\n"))
		cur = cur[:0]
		if chunk == "" {
			return nil
		}
		b, err := parseMADChunk(chunk)
		if err != nil {
			return err
		}
		blobs = append(blobs, b)
		return nil
	}
	sc := bufio.NewScanner(strings.NewReader(s))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "--" {
			if err := flush(); err != nil {
				return nil, err
			}
			continue
		}
		cur = append(cur, sc.Text())
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return blobs, nil
}

// parseMADChunk reads one MAD: a quoted python string or hex groups.
func parseMADChunk(s string) ([]byte, error) {
	if s[0] == '"' || s[0] == '\'' {
		if len(s) < 2 || s[len(s)-1] != s[0] {
			return nil, fmt.Errorf("a quoted MAD must end with the quote it starts with (%c)", s[0])
		}
		return unescapePython(s[1 : len(s)-1])
	}
	var digits strings.Builder
	groups := strings.FieldsFunc(s, func(r rune) bool {
		return r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == ':' || r == ','
	})
	for _, g := range groups {
		if h, ok := strings.CutPrefix(strings.ToLower(g), "0x"); ok {
			if len(h)%2 == 1 {
				h = "0" + h // 0x1 is the byte 01
			}
			g = h
		}
		digits.WriteString(g)
	}
	b, err := hex.DecodeString(digits.String())
	if err != nil {
		var ie hex.InvalidByteError
		if errors.As(err, &ie) {
			return nil, fmt.Errorf("the input is not hex: %q is no hex digit (write a MAD as hex digits, or as a quoted python string)", string(rune(ie)))
		}
		return nil, fmt.Errorf("the input is not hex: %d digits, an odd number", digits.Len())
	}
	return b, nil
}

// unescapePython decodes a python 2 byte string body ('string_escape'):
// \xHH, \NNN octal, \n \r \t \a \b \f \v \0 \\ \' \", other bytes as they
// are.
func unescapePython(s string) ([]byte, error) {
	var b []byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' {
			b = append(b, c)
			continue
		}
		i++
		if i == len(s) {
			return nil, errors.New("the quoted MAD ends in a lone backslash")
		}
		switch c = s[i]; c {
		case 'x':
			if i+3 > len(s) {
				return nil, fmt.Errorf("\\x needs two hex digits at byte %d", i-1)
			}
			v, err := strconv.ParseUint(s[i+1:i+3], 16, 8)
			if err != nil {
				return nil, fmt.Errorf("\\x needs two hex digits at byte %d", i-1)
			}
			b = append(b, byte(v))
			i += 2
		case 'n':
			b = append(b, '\n')
		case 'r':
			b = append(b, '\r')
		case 't':
			b = append(b, '\t')
		case 'a':
			b = append(b, 7)
		case 'b':
			b = append(b, 8)
		case 'f':
			b = append(b, 12)
		case 'v':
			b = append(b, 11)
		case '\n': // a continued line
		default:
			if c >= '0' && c <= '7' {
				j := i
				for j < len(s) && j < i+3 && s[j] >= '0' && s[j] <= '7' {
					j++
				}
				v, _ := strconv.ParseUint(s[i:j], 8, 16)
				b = append(b, byte(v))
				i = j - 1
				continue
			}
			if c == '\\' || c == '\'' || c == '"' {
				b = append(b, c)
				continue
			}
			b = append(b, '\\', c) // python keeps unknown escapes
		}
	}
	return b, nil
}

// decodedMAD is one MAD decoded: the exported fields are its JSON; the
// text shows the same structures over the bytes they came from.
type decodedMAD struct {
	Summary       string             `json:"summary"`
	UMAD          *umadHeaderJSON    `json:"umad,omitempty"`
	LRH           *mad.LRH           `json:"lrh,omitempty"`
	GRH           *mad.GRH           `json:"grh,omitempty"`
	BTH           *mad.BTH           `json:"bth,omitempty"`
	DETH          *mad.DETH          `json:"deth,omitempty"`
	MADHeader     *mad.MADHeader     `json:"mad_header"`
	SMP           *smpHeaderJSON     `json:"smp,omitempty"`
	SAHeader      *mad.SAHeader      `json:"sa_header,omitempty"`
	CCHeader      *mad.CCHeader      `json:"cc_header,omitempty"`
	VendorHeader  *mad.Vendor2Header `json:"vendor_header,omitempty"`
	CompMask      []string           `json:"component_mask_fields,omitempty"`
	VendorOUI     string             `json:"vendor_oui,omitempty"`
	AttributeName string             `json:"attribute_text"`
	Attribute     mad.Struct         `json:"attribute,omitempty"`
	Records       []mad.Struct       `json:"records,omitempty"`
	Data          string             `json:"data,omitempty"`

	verbose int
	input   []byte          // the bytes after -o, shown with -vv
	link    []mad.Struct    // the link headers (-l), in packet order
	raw     []byte          // the MAD
	hdr     *mad.StructDesc // the class header shown; nil: the common header
	dr      *mad.DRSMP      // a directed route SMP, for its paths
	desc    *mad.StructDesc // the attribute's layout; nil: no decoder
	dataOff int             // where the attribute data starts
	table   bool            // the data is SA records, AttributeOffset apart
}

type smpHeaderJSON struct {
	MKey        string `json:"m_key"`
	Direction   *int   `json:"direction,omitempty"` // the D bit: 1 in returning SMPs
	DrSLID      *int   `json:"dr_slid,omitempty"`
	DrDLID      *int   `json:"dr_dlid,omitempty"`
	HopPointer  *int   `json:"hop_pointer,omitempty"`
	HopCount    *int   `json:"hop_count,omitempty"`
	InitialPath string `json:"initial_path,omitempty"`
	ReturnPath  string `json:"return_path,omitempty"`
}

func DecodeMADBytes(b []byte, opts *DecodeMADOptions) (*decodedMAD, error) {
	if opts.offset > len(b) {
		return nil, fmt.Errorf("-o %d: the input has only %d bytes", opts.offset, len(b))
	}
	b = b[opts.offset:]
	d := &decodedMAD{verbose: opts.Verbose, input: b}
	if opts.Umad {
		if len(b) < umadHeaderSize {
			return nil, fmt.Errorf("--umad: %d bytes, but the umad header alone is %d", len(b), umadHeaderSize)
		}
		d.UMAD = decodeUMADHeader(b[:umadHeaderSize])
		b = b[umadHeaderSize:]
	}
	if opts.lrh {
		var err error
		if b, err = d.decodeLink(b); err != nil {
			return nil, err
		}
	}
	if len(b) < mad.MADHeaderSize {
		return nil, fmt.Errorf("%d bytes are too few for a MAD: the common header alone is %d", len(b), mad.MADHeaderSize)
	}
	d.raw = b
	h := mad.Header(b)
	class, attrID := h.Class(), h.AttrID()
	d.desc = mad.LookupAttr(class, attrID)
	d.AttributeName = mad.AttrName(class, attrID)
	d.Summary = fmt.Sprintf("%s(%s) status 0x%04x (%s)", mad.MethodName(class, h.Method()), d.AttributeName, h.Status(),
		mad.StatusText(class, h.Status()))
	d.MADHeader = &mad.MADHeader{}
	if err := d.MADHeader.Unmarshal(b); err != nil {
		return nil, err
	}

	// The class header: a structure over the start of the MAD, padded
	// where the MAD is short.
	header := func(s mad.Struct) error {
		d.hdr = s.Desc()
		return s.Unmarshal(padTo(b, d.hdr.Size))
	}
	var err error
	d.dataOff = mad.AttrDataOffset(class, attrID)
	switch {
	case class == mad.ClassSubnLID:
		var smp mad.SMP
		err = header(&smp)
		d.SMP = &smpHeaderJSON{MKey: mad.GUID(smp.MKey).String()}
	case class == mad.ClassSubnDR:
		d.dr = &mad.DRSMP{}
		err = header(d.dr)
		d.SMP = drSMPHeader(d.dr)
		if len(b) < mad.DRSMPSize {
			d.SMP.InitialPath, d.SMP.ReturnPath = "", ""
		}
	case class == mad.ClassSubnAdm:
		d.SAHeader = &mad.SAHeader{}
		err = header(d.SAHeader)
		if d.desc != nil && d.SAHeader.ComponentMask != 0 {
			d.CompMask = mad.CompMaskFields(d.desc, d.SAHeader.ComponentMask)
		}
	case class == mad.ClassCongest:
		d.CCHeader = &mad.CCHeader{}
		err = header(d.CCHeader)
	case class == mad.ClassPerf && !allZero(b[mad.MADHeaderSize:min(len(b), mad.PerfMgtHeaderSize)]):
		// Reserved bytes someone set are worth showing.
		err = header(&mad.PerfMgtHeader{})
	case d.dataOff == mad.Vendor2DataOffset:
		d.VendorHeader = &mad.Vendor2Header{}
		err = header(d.VendorHeader)
		if len(b) >= mad.Vendor2HeaderSize {
			d.VendorOUI = fmt.Sprintf("0x%06x", d.VendorHeader.OUI)
		}
	}
	if err != nil {
		return nil, err
	}
	if d.dataOff >= len(b) {
		return d, nil
	}

	data := b[d.dataOff:]
	switch {
	case d.desc == nil:
		d.Data = hex.EncodeToString(data)
	case class == mad.ClassSubnAdm && saIsTable(h.Method(), d.SAHeader):
		// An RMPP DATA packet says how long its payload (SA header words
		// after the RMPP header, then records) is; otherwise trailing
		// all-zero records are padding.
		d.table = true
		table, known := b, false
		if r := d.SAHeader.RMPP; r.RMPPType == mad.RMPPTypeData && r.RMPPFlags&uint8(mad.RMPPFlagsFirst) != 0 &&
			int(r.PayloadLength) >= mad.SAHeaderSize-rmppPayloadStart {
			table, known = b[:min(len(b), rmppPayloadStart+int(r.PayloadLength))], true
		}
		recs, err := sa.SplitTable(table, d.desc.Size)
		if err != nil {
			return nil, err
		}
		for !known && len(recs) > 0 && allZero(recs[len(recs)-1]) {
			recs = recs[:len(recs)-1]
		}
		for _, r := range recs {
			s := d.desc.New()
			if err := s.Unmarshal(r); err != nil {
				return nil, err
			}
			d.Records = append(d.Records, s)
		}
	default:
		s := d.desc.New()
		if err := s.Unmarshal(padTo(data, d.desc.Size)); err != nil {
			return nil, err
		}
		d.Attribute = s
	}
	return d, nil
}

// Render writes what decode_mad shows of the MAD: with -vv the input,
// with -v the umad and link headers, the summary, the class header and
// the attribute (with -v also as libibmad prints it).
func (d *decodedMAD) Render(w *strings.Builder) {
	if d.verbose >= 2 {
		fmt.Fprintf(w, "input (%d bytes):\n%s", len(d.input), cmdutil.HexDump(d.input))
	}
	if d.verbose >= 1 {
		if d.UMAD != nil {
			w.WriteString(d.UMAD.text())
		}
		off := 0
		for _, s := range d.link {
			w.WriteString(dumpAt(mad.Dump(s), off))
			off += s.Desc().Size
		}
	}
	w.WriteString(d.Summary + "\n")

	b := d.raw
	switch {
	case d.SMP != nil:
		w.WriteString(dumpPrefix(d.hdr, b, smpHeaderLen))
	case d.hdr != nil:
		w.WriteString(dumpAt(mad.DumpBytes(d.hdr, b[:min(len(b), d.hdr.Size)]), 0))
	default:
		w.WriteString(dumpAt(mad.Dump(d.MADHeader), 0))
	}
	switch {
	case d.dr != nil && len(b) < mad.DRSMPSize:
		fmt.Fprintf(w, "  (the MAD has %d bytes: no room for the paths)\n", len(b))
	case d.dr != nil && d.dr.HopCount > mad.MaxDRHops:
		fmt.Fprintf(w, "  hop count %d is more than %d: no paths\n", d.dr.HopCount, mad.MaxDRHops)
	case d.dr != nil:
		n := d.dr.HopCount + 1
		fmt.Fprintf(w, "  initial path %s\n  return path  %s\n", mad.FormatDRPath(d.dr.InitialPath[:n]), mad.FormatDRPath(d.dr.ReturnPath[:n]))
	case d.SAHeader != nil && d.desc != nil && d.SAHeader.ComponentMask != 0:
		fmt.Fprintf(w, "ComponentMask 0x%016x: %s\n", d.SAHeader.ComponentMask, strings.Join(d.CompMask, " "))
	}

	if d.dataOff >= len(b) {
		return
	}
	data := b[d.dataOff:]
	switch {
	case d.desc == nil:
		h := mad.Header(b)
		fmt.Fprintf(w, "data (no decoder for attribute 0x%04x of class 0x%02x) at byte %d:\n", h.AttrID(), h.Class(), d.dataOff)
		if t := trimZeros(data); len(t) > 0 {
			w.WriteString(cmdutil.HexDump(t))
		} else {
			w.WriteString("  all zero\n")
		}
	case d.table:
		stride := int(d.SAHeader.AttributeOffset) * 8
		fmt.Fprintf(w, "%d %s records, %d bytes apart\n", len(d.Records), d.desc.Name, stride)
		for i, s := range d.Records {
			title := fmt.Sprintf("%s[%d] (", d.desc.Name, i)
			w.WriteString(strings.Replace(dumpAt(mad.Dump(s), d.dataOff+i*stride), d.desc.Name+" (", title, 1))
			d.writeDotted(w, s)
		}
	default:
		w.WriteString(dumpAt(mad.DumpBytes(d.desc, data[:min(len(data), d.desc.Size)]), d.dataOff))
		d.writeDotted(w, d.Attribute)
	}
}

// writeDotted adds, with -v, libibmad's dotted form of s.
func (d *decodedMAD) writeDotted(w *strings.Builder, s mad.Struct) {
	if dotted := mad.Dotted(s, &mad.DottedOptions{ShowKeys: true}); d.verbose >= 1 && dotted != "" {
		w.WriteString("as libibmad prints it:\n" + dotted)
	}
}

// saIsTable says whether an SA MAD's data is a table of records spaced
// AttributeOffset apart (GetTable responses and friends), not one record.
func saIsTable(method uint8, sh *mad.SAHeader) bool {
	switch method {
	case mad.MethodGetTblResp, mad.MethodGetTraceTable | mad.MethodResponse, mad.MethodGetMulti | mad.MethodResponse:
		return sh.AttributeOffset != 0
	}
	return false
}

// rmppPayloadStart is where an RMPP packet's payload starts: after the
// common and RMPP headers (IBA 13.6.2.1).
const rmppPayloadStart = mad.MADHeaderSize + mad.RMPPHeaderSize

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// dumpAt adds where a structure starts in the MAD to a dump's title line.
func dumpAt(dump string, off int) string {
	title, rest, _ := strings.Cut(dump, "\n")
	return fmt.Sprintf("%s at byte %d\n%s", title, off, rest)
}

func padTo(b []byte, n int) []byte {
	if len(b) >= n {
		return b
	}
	return append(append([]byte(nil), b...), make([]byte, n-len(b))...)
}

// trimZeros drops trailing zero bytes, keeping whole 16-byte lines.
func trimZeros(b []byte) []byte {
	n := len(b)
	for n > 0 && b[n-1] == 0 {
		n--
	}
	return b[:min(len(b), (n+15)/16*16)]
}

// smpHeaderLen is the SMP header decode_mad shows in full: everything
// before the attribute data (the paths come after it).
const smpHeaderLen = mad.SMPDataOffset

// drSMPHeader is the JSON of a directed-route SMP's header fields.
func drSMPHeader(dr *mad.DRSMP) *smpHeaderJSON {
	num := func(v int) *int { return &v }
	s := &smpHeaderJSON{
		MKey: mad.GUID(dr.MKey).String(), Direction: num(int(dr.D)),
		DrSLID: num(int(dr.DrSLID)), DrDLID: num(int(dr.DrDLID)),
		HopPointer: num(int(dr.HopPointer)), HopCount: num(int(dr.HopCount)),
	}
	if dr.HopCount <= mad.MaxDRHops {
		s.InitialPath = mad.FormatDRPath(dr.InitialPath[:dr.HopCount+1])
		s.ReturnPath = mad.FormatDRPath(dr.ReturnPath[:dr.HopCount+1])
	}
	return s
}

// dumpPrefix is mad.DumpBytes of the first n bytes of a structure
// (the header of a whole-MAD structure), titled with the range.
func dumpPrefix(d *mad.StructDesc, b []byte, n int) string {
	n = min(n, len(b))
	title, rest, _ := strings.Cut(mad.DumpBytes(d, b[:n]), "\n")
	lines := strings.SplitAfter(rest, "\n")
	title = strings.Replace(title, fmt.Sprintf(", %d bytes)", d.Size), ")", 1)
	return fmt.Sprintf("%s bytes 0..%d\n%s", title, n-1, strings.Join(lines[:min(len(lines), (n+3)/4)], ""))
}

// decodeLink decodes the link and transport headers before a MAD (-l):
// the LRH, a GRH if the LRH says one follows, the BTH, and the DETH of an
// unreliable datagram. It returns the bytes after them.
func (d *decodedMAD) decodeLink(b []byte) ([]byte, error) {
	off := 0
	take := func(s mad.Struct, what string) error {
		size := s.Desc().Size
		if len(b)-off < size {
			return fmt.Errorf("-l: %d bytes left at byte %d, too few for the %s (%d)", len(b)-off, off, what, size)
		}
		if err := s.Unmarshal(b[off:]); err != nil {
			return err
		}
		d.link = append(d.link, s)
		off += size
		return nil
	}
	d.LRH = &mad.LRH{}
	if err := take(d.LRH, "LRH"); err != nil {
		return nil, err
	}
	switch d.LRH.LNH {
	case mad.LNHGlobal:
		d.GRH = &mad.GRH{}
		if err := take(d.GRH, "GRH"); err != nil {
			return nil, err
		}
	case mad.LNHLocal:
	default:
		return nil, fmt.Errorf("-l: the LRH's LNH is %d (%s): no InfiniBand transport header follows", d.LRH.LNH, d.LRH.LNH)
	}
	d.BTH = &mad.BTH{}
	if err := take(d.BTH, "BTH"); err != nil {
		return nil, err
	}
	// Unreliable datagram opcodes (IBA 9.2, Table 38: 011xxxxx) carry a
	// DETH; SEND Only with Immediate adds 4 bytes of immediate data.
	if d.BTH.OpCode>>5 == 3 {
		d.DETH = &mad.DETH{}
		if err := take(d.DETH, "DETH"); err != nil {
			return nil, err
		}
		if d.BTH.OpCode&0x1f == 5 {
			off += 4
		}
	}
	if off > len(b) {
		return nil, fmt.Errorf("-l: the packet ends inside its headers")
	}
	return b[off:], nil
}

const umadHeaderSize = umad.KernelHeaderSize

// umadHeaderJSON is the kernel's struct ib_user_mad_hdr as decoded by the
// kernel transport's own codec.
type umadHeaderJSON struct {
	AgentID      uint32 `json:"agent_id"`
	Status       uint32 `json:"status"`
	TimeoutMS    uint32 `json:"timeout_ms"`
	Retries      uint32 `json:"retries"`
	Length       uint32 `json:"length"`
	QPN          uint32 `json:"qpn"`
	QKey         uint32 `json:"qkey"`
	LID          uint16 `json:"lid"`
	SL           uint8  `json:"sl"`
	PathBits     uint8  `json:"path_bits"`
	GRHPresent   uint8  `json:"grh_present"`
	GIDIndex     uint8  `json:"gid_index"`
	HopLimit     uint8  `json:"hop_limit"`
	TrafficClass uint8  `json:"traffic_class"`
	GID          string `json:"gid"`
	FlowLabel    uint32 `json:"flow_label"`
	PKeyIndex    uint16 `json:"pkey_index"`
}

func decodeUMADHeader(b []byte) *umadHeaderJSON {
	h, err := umad.DecodeKernelHeader(b)
	if err != nil {
		return nil // the caller checked the length
	}
	return &umadHeaderJSON{
		AgentID: h.ID, Status: h.Status, TimeoutMS: h.TimeoutMS, Retries: h.Retries,
		Length: h.Length, QPN: h.QPN, QKey: h.QKey, LID: h.LID,
		SL: h.SL, PathBits: h.PathBits, GRHPresent: h.GRHPresent, GIDIndex: h.GIDIndex, HopLimit: h.HopLimit,
		TrafficClass: h.TrafficClass, GID: mad.GID(h.GID).String(), FlowLabel: h.FlowLabel, PKeyIndex: h.PKeyIndex,
	}
}

func (u *umadHeaderJSON) text() string {
	t := fmt.Sprintf("umad header (struct ib_user_mad_hdr, %d bytes)\n  agent_id %d status %d timeout_ms %d retries %d length %d\n"+
		"  qpn %d qkey 0x%08x lid %d sl %d path_bits %d pkey_index %d\n",
		umadHeaderSize, u.AgentID, u.Status, u.TimeoutMS, u.Retries, u.Length, u.QPN, u.QKey, u.LID, u.SL, u.PathBits, u.PKeyIndex)
	if u.GRHPresent != 0 {
		t += fmt.Sprintf("  grh gid %s gid_index %d hop_limit %d traffic_class %d flow_label 0x%x\n",
			u.GID, u.GIDIndex, u.HopLimit, u.TrafficClass, u.FlowLabel)
	}
	return t
}
