// Package nodename maps node GUIDs to names with infiniband-diags'
// ib-node-name-map file, parsed exactly as rdma-core's util/node_name_map.c
// parses it, so a map that works with the C tools works with ibtool.
package nodename

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
)

// DefaultPath is where the C tools look when --node-name-map is not given.
const DefaultPath = "/etc/rdma/ib-node-name-map"

// lineBuf is the C parser's fgets buffer: longer lines are read in pieces,
// each piece parsed as a line of its own.
const lineBuf = 256

// Map holds the names of a node name map. The zero Map (and a nil *Map)
// names nothing.
type Map struct {
	names map[uint64]string
}

// Open reads a node name map. An empty path means DefaultPath, and then a
// missing file is no error (an empty map). Like the C tools, a file that
// cannot be parsed yields an empty map and a warning written to warn, so the
// command carries on with node descriptions.
func Open(path string, warn io.Writer) *Map {
	explicit := path != ""
	if !explicit {
		path = DefaultPath
	}
	f, err := os.Open(path)
	if err != nil {
		if explicit || !errors.Is(err, os.ErrNotExist) {
			fmt.Fprintf(warn, "WARNING failed to open node name map \"%s\" (%s)\n", path, cErrno(err))
		}
		return &Map{}
	}
	defer f.Close()
	m, bad, err := Parse(f)
	if err != nil {
		fmt.Fprintf(warn, "WARNING failed to parse node name map \"%s\"\n", path)
		fmt.Fprintf(warn, "WARNING failed line: \"%s\"\n", bad)
		return &Map{}
	}
	return m
}

// ErrSyntax is returned by Parse for a line whose GUID does not parse.
var ErrSyntax = errors.New("node name map: bad GUID")

// Parse reads a map. On a bad line it returns ErrSyntax and that line.
func Parse(r io.Reader) (m *Map, badLine string, err error) {
	m = &Map{names: map[uint64]string{}}
	br := bufio.NewReader(r)
	for {
		line, err := readPiece(br)
		if len(line) > 0 {
			if !m.parseLine(line) {
				return nil, string(bytes.TrimSuffix(line, []byte("\n"))), ErrSyntax
			}
		}
		if err == io.EOF {
			return m, "", nil
		}
		if err != nil {
			return nil, "", err
		}
	}
}

// readPiece reads what one fgets(line, 256, f) call would.
func readPiece(br *bufio.Reader) ([]byte, error) {
	var piece []byte
	for len(piece) < lineBuf-1 {
		c, err := br.ReadByte()
		if err != nil {
			return piece, err
		}
		piece = append(piece, c)
		if c == '\n' {
			break
		}
	}
	return piece, nil
}

func (m *Map) parseLine(line []byte) bool {
	p := bytes.TrimLeft(line, " \t\n\v\f\r")
	if len(p) == 0 || p[0] == '#' {
		return true
	}
	guid, n := strtoull(p)
	if n == 0 || (n < len(p) && !isSpace(p[n]) && p[n] != '#') {
		return false
	}
	rest := bytes.TrimLeft(p[n:], " \t\n\v\f\r")
	if i := bytes.IndexByte(rest, '\n'); i >= 0 {
		rest = rest[:i]
	}
	// The name is the first token of strtok(rest, "\"#").
	rest = bytes.TrimLeft(rest, "\"#")
	if i := bytes.IndexAny(rest, "\"#"); i >= 0 {
		rest = rest[:i]
	}
	if len(rest) == 0 {
		return true
	}
	if _, dup := m.names[guid]; !dup { // the first entry wins
		m.names[guid] = string(rest)
	}
	return true
}

// strtoull parses like C strtoull(p, &e, 0) and returns the value and the
// number of bytes consumed (0 when nothing parsed). Overflow saturates.
func strtoull(p []byte) (uint64, int) {
	i := 0
	neg := false
	if i < len(p) && (p[i] == '+' || p[i] == '-') {
		neg = p[i] == '-'
		i++
	}
	base := uint64(10)
	switch {
	case i+1 < len(p) && p[i] == '0' && (p[i+1] == 'x' || p[i+1] == 'X') && i+2 < len(p) && digit(p[i+2], 16) >= 0:
		base, i = 16, i+2
	case i < len(p) && p[i] == '0':
		base = 8
	}
	start := i
	var v uint64
	overflow := false
	for ; i < len(p) && digit(p[i], base) >= 0; i++ {
		d := uint64(digit(p[i], base))
		if v > (^uint64(0)-d)/base {
			overflow = true
		}
		v = v*base + d
	}
	if i == start {
		return 0, 0
	}
	if overflow {
		return ^uint64(0), i
	}
	if neg {
		v = -v
	}
	return v, i
}

func digit(c byte, base uint64) int {
	var d int
	switch {
	case c >= '0' && c <= '9':
		d = int(c - '0')
	case c >= 'a' && c <= 'f':
		d = int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		d = int(c-'A') + 10
	default:
		return -1
	}
	if uint64(d) >= base {
		return -1
	}
	return d
}

func isSpace(c byte) bool { return c == ' ' || (c >= '\t' && c <= '\r') }

// Name returns the mapped name of a node, or its cleaned description.
func (m *Map) Name(guid uint64, nodeDesc string) string {
	if m != nil {
		if n, ok := m.names[guid]; ok {
			return n
		}
	}
	return CleanDesc(nodeDesc)
}

// Lookup returns the mapped name of a node, if the map has one.
func (m *Map) Lookup(guid uint64) (string, bool) {
	if m == nil {
		return "", false
	}
	n, ok := m.names[guid]
	return n, ok
}

// CleanDesc is a NodeDescription as the C tools show it: at most 64 bytes,
// cut at the first NUL, every non-printable byte a space.
func CleanDesc(desc string) string {
	b := []byte(desc)
	if len(b) > 64 {
		b = b[:64]
	}
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	for i, c := range b {
		if c < 0x20 || c > 0x7e {
			b[i] = ' '
		}
	}
	return string(b)
}

// cErrno renders an open error as strerror would.
func cErrno(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		msg := pe.Err.Error()
		if len(msg) > 0 {
			return string(bytes.ToUpper([]byte(msg[:1]))) + msg[1:]
		}
	}
	return err.Error()
}

// GUIDs returns the node GUIDs the map gives name, in GUID order.
func (m *Map) GUIDs(name string) []uint64 {
	if m == nil {
		return nil
	}
	var guids []uint64
	for g, n := range m.names {
		if n == name {
			guids = append(guids, g)
		}
	}
	slices.Sort(guids)
	return guids
}
