package umad

// Reading local CAs and ports from sysfs (<root>/class/infiniband), the way
// libibumad does, so ibstat shows the same numbers as infiniband-diags.
//
// Differences from libibumad, on purpose:
//   - CAs are sorted by name (libibumad lists them in readdir order).
//   - A CA that cannot be read is skipped and reported in a CAErrors value
//     returned next to the CAs that could be read (rdma-core PR #1501: one
//     bad device must not hide the others).
//   - A port whose rate file cannot be read keeps an empty Rate instead of
//     failing the whole CA: the kernel returns EINVAL for it when no cable
//     is plugged in (rdma-core PR #239).
//   - Port numbers are not limited to 0..9 (UMAD_CA_MAX_PORTS).

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// CAError reports one CA that could not be read from sysfs.
type CAError struct {
	CA  string
	Err error
}

func (e *CAError) Error() string { return fmt.Sprintf("IB device '%s': %v", e.CA, e.Err) }
func (e *CAError) Unwrap() error { return e.Err }

// CAErrors lists the CAs that ReadCAs skipped. The CAs returned with it are
// complete and usable.
type CAErrors []*CAError

func (e CAErrors) Error() string {
	msgs := make([]string, len(e))
	for i, ce := range e {
		msgs[i] = ce.Error()
	}
	return strings.Join(msgs, "; ")
}

// Unwrap lets errors.Is and errors.As look at each CA's error.
func (e CAErrors) Unwrap() []error {
	errs := make([]error, len(e))
	for i, ce := range e {
		errs[i] = ce
	}
	return errs
}

// Skipped returns the CAError for ca, or nil.
func (e CAErrors) Skipped(ca string) *CAError {
	for _, ce := range e {
		if ce.CA == ca {
			return ce
		}
	}
	return nil
}

// sysfs directory names below the root (normally /sys).
const (
	sysClassIB  = "class/infiniband"
	sysClassMAD = "class/infiniband_mad"
)

// ReadCAs lists every CA under <sysRoot>/class/infiniband, sorted by name,
// with its ports sorted by number. A missing class directory means no CAs
// (nil, nil), as for libibumad. CAs that cannot be read are left out and
// reported in a CAErrors error; the others are still returned.
func ReadCAs(sysRoot string) ([]CA, error) {
	dir := filepath.Join(sysRoot, sysClassIB)
	entries, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("cannot list IB devices: %w", err)
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		// Entries are symlinks into /sys/devices on a real system, so
		// e.IsDir() is false: readCA finds out whether each is usable.
		names = append(names, e.Name())
	}
	sort.Strings(names)
	var cas []CA
	var errs CAErrors
	for _, name := range names {
		ca, err := readCA(sysRoot, name)
		if err != nil {
			errs = append(errs, &CAError{CA: name, Err: err})
			continue
		}
		cas = append(cas, ca)
	}
	if len(errs) > 0 {
		return cas, errs
	}
	return cas, nil
}

// readCA reads one CA. Like libibumad, node_type, node_guid, sys_image_guid
// and the ports directory are required; fw_ver, hw_rev and hca_type are not.
func readCA(sysRoot, name string) (CA, error) {
	dir := filepath.Join(sysRoot, sysClassIB, name)
	ca := CA{Name: name}
	nt, err := readUint(dir, "node_type")
	if err != nil {
		return CA{}, err
	}
	ca.NodeType = int(uint32(nt))
	ca.FWVersion, _ = readString(dir, "fw_ver")
	ca.HWRevision, _ = readString(dir, "hw_rev")
	ca.Type, _ = readString(dir, "hca_type")
	if ca.NodeGUID, err = readGUID(dir, "node_guid"); err != nil {
		return CA{}, err
	}
	if ca.SysImageGUID, err = readGUID(dir, "sys_image_guid"); err != nil {
		return CA{}, err
	}
	portsDir := filepath.Join(dir, "ports")
	entries, err := os.ReadDir(portsDir)
	if err != nil {
		return CA{}, fmt.Errorf("cannot list ports: %w", err)
	}
	for _, e := range entries {
		num, ok := portNumber(e.Name())
		if !ok {
			return CA{}, fmt.Errorf("unexpected entry %q in %s", e.Name(), portsDir)
		}
		p, err := readPortDir(filepath.Join(portsDir, e.Name()), name, num)
		if err != nil {
			return CA{}, fmt.Errorf("port %d: %w", num, err)
		}
		ca.Ports = append(ca.Ports, p)
	}
	sort.Slice(ca.Ports, func(i, j int) bool { return ca.Ports[i].Num < ca.Ports[j].Num })
	return ca, nil
}

// ReadPort reads one port of one CA from sysfs.
func ReadPort(sysRoot, ca string, port int) (PortInfo, error) {
	dir := filepath.Join(sysRoot, sysClassIB, ca, "ports", strconv.Itoa(port))
	p, err := readPortDir(dir, ca, port)
	if err != nil {
		return PortInfo{}, fmt.Errorf("IB device '%s' port %d: %w", ca, port, err)
	}
	return p, nil
}

// portNumber accepts the all-digit names of a ports directory.
func portNumber(name string) (int, bool) {
	if name == "" || len(name) > 9 {
		return 0, false
	}
	for _, c := range name {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(name)
	return n, err == nil
}

// readPortDir reads ports/<num>. The files libibumad requires are required
// here too, except rate (see the top of this file); link_layer is optional
// ("" when missing, which ibstat shows as "IB").
func readPortDir(dir, ca string, num int) (PortInfo, error) {
	p := PortInfo{CA: ca, Num: num}
	var err error
	var v uint64
	if v, err = readUint(dir, "lid_mask_count"); err != nil {
		return PortInfo{}, err
	}
	p.LMC = uint8(v)
	if v, err = readUint(dir, "sm_lid"); err != nil {
		return PortInfo{}, err
	}
	p.SMLID = uint16(v)
	if v, err = readUint(dir, "sm_sl"); err != nil {
		return PortInfo{}, err
	}
	p.SMSL = uint8(v)
	if v, err = readUint(dir, "lid"); err != nil {
		return PortInfo{}, err
	}
	p.LID = uint16(v)
	if v, err = readUint(dir, "state"); err != nil {
		return PortInfo{}, err
	}
	p.State = int(uint32(v))
	if v, err = readUint(dir, "phys_state"); err != nil {
		return PortInfo{}, err
	}
	p.PhysState = int(uint32(v))
	p.Rate, _ = readString(dir, "rate")
	if v, err = readUint(dir, "cap_mask"); err != nil {
		return PortInfo{}, err
	}
	p.CapMask = uint32(v)
	p.LinkLayer, _ = readString(dir, "link_layer")

	if p.GIDs, err = readTable(filepath.Join(dir, "gids")); err != nil {
		return PortInfo{}, err
	}
	if len(p.GIDs) == 0 {
		return PortInfo{}, fmt.Errorf("no GID 0 in %s", filepath.Join(dir, "gids"))
	}
	gid, err := parseGID(p.GIDs[0])
	if err != nil {
		return PortInfo{}, fmt.Errorf("gids/0: %w", err)
	}
	p.GIDPrefix, p.PortGUID = gidHalves(gid)

	pkeys, err := readTable(filepath.Join(dir, "pkeys"))
	if err != nil {
		return PortInfo{}, err
	}
	if len(pkeys) == 0 {
		return PortInfo{}, fmt.Errorf("no P_Keys in %s", filepath.Join(dir, "pkeys"))
	}
	p.PKeys = make([]uint16, len(pkeys))
	for i, s := range pkeys {
		p.PKeys[i] = uint16(parseULong(s, 0))
	}
	return p, nil
}

// maxTableIndex bounds the gids/ and pkeys/ indexes we accept (the largest
// real tables have 65536 P_Keys).
const maxTableIndex = 1 << 16

// readTable reads a sysfs table directory (gids/, pkeys/): entry i of the
// result is the text of file <i>; indexes without a readable file are "".
func readTable(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		i, ok := portNumber(e.Name())
		if !ok || i >= maxTableIndex {
			continue
		}
		for len(out) <= i {
			out = append(out, "")
		}
		out[i], _ = readString(dir, e.Name())
	}
	return out, nil
}

// readString reads a sysfs file the way libibumad's sys_read_string does:
// the text up to its last newline.
func readString(dir, name string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return "", err
	}
	s := string(b)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s, nil
}

func readUint(dir, name string) (uint64, error) {
	s, err := readString(dir, name)
	if err != nil {
		return 0, err
	}
	return parseULong(s, 0), nil
}

func readGUID(dir, name string) (uint64, error) {
	s, err := readString(dir, name)
	if err != nil {
		return 0, err
	}
	g, err := parseGUID(s)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", name, err)
	}
	return g, nil
}

// SysfsUint reads a number from sysfs text the way libibumad does (C's
// strtoul with base 0 on the leading token): "4: ACTIVE" is 4, "0x4" is 4,
// "100 Gb/sec (4X EDR)" is 100 and "2.5 Gb/sec (1X SDR)" is 2.
func SysfsUint(s string) uint64 { return parseULong(s, 0) }

// parseULong is C's strtoul: leading white space, an optional sign, then
// digits in base (0: "0x" hex, "0" octal, else decimal), stopping at the
// first character that is not a digit. No digits give 0, overflow gives
// the maximum value, a minus sign negates (modulo 2^64).
func parseULong(s string, base int) uint64 {
	i := 0
	for i < len(s) && isCSpace(s[i]) {
		i++
	}
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	hasHexPrefix := i+2 < len(s) && s[i] == '0' && (s[i+1] == 'x' || s[i+1] == 'X') && digitVal(s[i+2]) < 16
	switch {
	case (base == 0 || base == 16) && hasHexPrefix:
		base = 16
		i += 2
	case base == 0 && i < len(s) && s[i] == '0':
		base = 8
	case base == 0:
		base = 10
	}
	if base < 2 || base > 36 {
		return 0
	}
	var v uint64
	overflow := false
	for ; i < len(s); i++ {
		d := digitVal(s[i])
		if d >= base {
			break
		}
		if v > (math.MaxUint64-uint64(d))/uint64(base) {
			overflow = true
		}
		v = v*uint64(base) + uint64(d)
	}
	if overflow {
		return math.MaxUint64
	}
	if neg {
		return -v
	}
	return v
}

func isCSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

func digitVal(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'z':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'Z':
		return int(c-'A') + 10
	}
	return 99
}

// splitSep splits s at every byte in seps, keeping empty fields, like
// repeated calls of C's strsep.
func splitSep(s, seps string) []string {
	var out []string
	for {
		i := strings.IndexAny(s, seps)
		if i < 0 {
			return append(out, s)
		}
		out = append(out, s[:i])
		s = s[i+1:]
	}
}

// parseGroups reads n colon-separated groups of hex digits (16 bits each),
// as libibumad's sys_read_guid and sys_read_gid do.
func parseGroups(s string, n int) ([]uint16, error) {
	f := splitSep(s, ": \t\n")
	if len(f) < n {
		return nil, fmt.Errorf("%q: want %d groups of hex digits separated by ':'", s, n)
	}
	out := make([]uint16, n)
	for i := range out {
		out[i] = uint16(parseULong(f[i], 16))
	}
	return out, nil
}

// parseGUID parses sysfs's "xxxx:xxxx:xxxx:xxxx".
func parseGUID(s string) (uint64, error) {
	g, err := parseGroups(s, 4)
	if err != nil {
		return 0, err
	}
	var v uint64
	for _, x := range g {
		v = v<<16 | uint64(x)
	}
	return v, nil
}

// parseGID parses sysfs's 8-group GID text ("fe80:0000:...").
func parseGID(s string) ([16]byte, error) {
	var gid [16]byte
	g, err := parseGroups(s, 8)
	if err != nil {
		return gid, err
	}
	for i, x := range g {
		gid[2*i] = byte(x >> 8)
		gid[2*i+1] = byte(x)
	}
	return gid, nil
}

// gidHalves splits a GID into its subnet prefix and interface ID.
func gidHalves(gid [16]byte) (prefix, guid uint64) {
	for i := 0; i < 8; i++ {
		prefix = prefix<<8 | uint64(gid[i])
		guid = guid<<8 | uint64(gid[8+i])
	}
	return prefix, guid
}
