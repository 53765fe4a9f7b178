package endport

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
)

// Kind says how a target names its port.
type Kind int

const (
	ByLID    Kind = iota + 1 // a unicast LID
	ByGUID                   // a port GUID (resolved through the SA)
	ByGID                    // a port GID (resolved through the SA)
	ByDRPath                 // a directed route from the local port
)

func (k Kind) String() string {
	return map[Kind]string{ByLID: "LID", ByGUID: "GUID", ByGID: "GID", ByDRPath: "DR path", ByName: "node name"}[k]
}

// Target is a destination port as the user named it.
type Target struct {
	Kind   Kind
	LID    uint16
	GUID   uint64
	GID    [16]byte
	DRPath []byte
	Name   string // ByName: the name as given
	// Local names the local end port a scoped GID ("GID%mlx5_0/1") or a
	// path spec's end_port chose, "" when the target does not say.
	Local string
	// Path holds the explicit fields of a python-rdma path spec
	// ("IBPath(DLID=8,SL=2)"), keyed by lower-case name.
	Path map[string]string
}

// TypeFlags are the C tools' -D/-L/-G options: each says how to read the
// target and is checked against what it turns out to be.
type TypeFlags struct {
	Direct, LID, GUID bool
}

// LinkLocalPrefix is the default GID prefix (IBA 4.1.1).
const LinkLocalPrefix = 0xFE80_0000_0000_0000

// ParseTarget parses a destination in every form python-rdma and
// infiniband-diags accept, in python-rdma's order: a path spec ("IBPath(...)"),
// a DR path ("0,1,3"), a scoped GID ("fe80::1%mlx5_0/1"), a GID, a port GUID
// ("0002:c903:0000:1491" or 16 hex digits), and a LID.
func ParseTarget(s string, f TypeFlags) (Target, error) {
	if n := btoi(f.Direct) + btoi(f.LID) + btoi(f.GUID); n > 1 {
		return Target{}, fmt.Errorf("-D, -L and -G exclude each other")
	}
	s = strings.TrimSpace(s)
	if s == "" {
		return Target{}, fmt.Errorf("empty target")
	}
	t, err := parseAny(s, f)
	if err != nil {
		return Target{}, err
	}
	switch {
	case f.Direct && t.Kind != ByDRPath:
		return Target{}, fmt.Errorf("target %q is a %s, but -D asks for a directed route", s, t.Kind)
	case f.LID && t.Kind != ByLID:
		return Target{}, fmt.Errorf("target %q is a %s, but -L asks for a LID", s, t.Kind)
	case f.GUID && t.Kind != ByGUID && t.Kind != ByGID:
		return Target{}, fmt.Errorf("target %q is a %s, but -G asks for a GUID", s, t.Kind)
	}
	return t, nil
}

func parseAny(s string, f TypeFlags) (Target, error) {
	switch {
	case strings.Contains(s, "("):
		return parsePathSpec(s)
	case strings.Contains(s, ","):
		p, err := ParseDRPath(s)
		return Target{Kind: ByDRPath, DRPath: p}, err
	case f.Direct:
		// -D with a bare number: "0" is the local port, python-rdma's "N,".
		p, err := ParseDRPath(s)
		return Target{Kind: ByDRPath, DRPath: p}, err
	case strings.Contains(s, "%"):
		gidText, local, _ := strings.Cut(s, "%")
		gid, err := ParseGID(gidText)
		if err != nil {
			return Target{}, err
		}
		if local == "" {
			return Target{}, fmt.Errorf("scoped GID %q names no local port after %%", s)
		}
		return Target{Kind: ByGID, GID: gid, Local: local}, nil
	case f.GUID:
		// The C tools read -G targets with strtoull: "0x0002c90300001491".
		if g, err := ParseUint(s, 64); err == nil {
			return Target{Kind: ByGUID, GUID: g}, nil
		}
		if g, err := ParseGUID(s); err == nil {
			return Target{Kind: ByGUID, GUID: g}, nil
		}
		if gid, err := ParseGID(s); err == nil {
			return Target{Kind: ByGID, GID: gid}, nil
		}
		return Target{}, fmt.Errorf("invalid GUID %q: use 0x0002c90300001491, 0002:c903:0000:1491 or a GID", s)
	}
	// A GUID has at most four colon groups; a GID has eight, or "::".
	if strings.Count(s, ":") > 3 || strings.Contains(s, "::") {
		gid, err := ParseGID(s)
		if err != nil {
			return Target{}, err
		}
		return Target{Kind: ByGID, GID: gid}, nil
	}
	if g, err := ParseGUID(s); err == nil {
		return Target{Kind: ByGUID, GUID: g}, nil
	} else if strings.Contains(s, ":") {
		return Target{}, err
	}
	// A 0x number too big for a LID can only be a GUID (the C tools want
	// -G for it; there is no ambiguity to guard against).
	if v, err := ParseUint(s, 64); err == nil && v > 0xFFFF && (strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X")) {
		return Target{Kind: ByGUID, GUID: v}, nil
	}
	lid, err := ParseLID(s)
	if err != nil {
		return Target{}, fmt.Errorf("invalid target %q: not a LID, port GUID, GID or directed route (%v)", s, err)
	}
	return Target{Kind: ByLID, LID: lid}, nil
}

// ParseGUID parses a port or node GUID written as colon groups
// ("0002:c903:0000:1491", "2:c903:0:1491": each group zero-filled to four
// digits, 16 in all) or as exactly 16 hex digits.
func ParseGUID(s string) (uint64, error) {
	var digits string
	if strings.Contains(s, ":") {
		groups := strings.Split(s, ":")
		for _, g := range groups {
			if g == "" || len(g) > 4 {
				return 0, fmt.Errorf("invalid GUID %q: groups of 1 to 4 hex digits", s)
			}
			digits += strings.Repeat("0", 4-len(g)) + g
		}
	} else {
		digits = s
	}
	if len(digits) != 16 {
		return 0, fmt.Errorf("invalid GUID %q: needs 16 hex digits", s)
	}
	v, err := strconv.ParseUint(digits, 16, 64)
	if err != nil {
		return 0, fmt.Errorf("invalid GUID %q: not hex", s)
	}
	return v, nil
}

// ParseGID parses a GID in IPv6 text form ("fe80::2:c903:0:1491").
func ParseGID(s string) ([16]byte, error) {
	a, err := netip.ParseAddr(s)
	if err != nil || !a.Is6() || a.Zone() != "" {
		return [16]byte{}, fmt.Errorf("invalid GID %q: use IPv6 notation, e.g. fe80::2:c903:0:1491", s)
	}
	return a.As16(), nil
}

// GIDFromGUID is the link-local GID of a port GUID.
func GIDFromGUID(guid uint64) [16]byte {
	var g [16]byte
	binary.BigEndian.PutUint64(g[:8], LinkLocalPrefix)
	binary.BigEndian.PutUint64(g[8:], guid)
	return g
}

// FormatGID renders a GID as IPv6 text.
func FormatGID(g [16]byte) string { return netip.AddrFrom16(g).String() }

// pathSpecKeys are the fields a python-rdma path spec may set.
// (A slice: a package-level map would be built at every start.)
var pathSpecKeys = []string{
	"slid", "dlid", "sl", "pkey", "pkey_index", "qkey",
	"dqpn", "sqpn", "dgid", "sgid", "end_port", "drpath",
	"retries", "timeout", "hop_limit", "traffic_class", "flow_label",
}

// parsePathSpec parses python-rdma's path repr: IBPath(DLID=8,SL=2) or
// IBDRPath(drPath=0:1:3:).
func parsePathSpec(s string) (Target, error) {
	name, rest, _ := strings.Cut(s, "(")
	body, ok := strings.CutSuffix(rest, ")")
	if !ok || (name != "IBPath" && name != "IBDRPath") {
		return Target{}, fmt.Errorf("invalid path spec %q: use IBPath(DLID=...) or IBDRPath(drPath=0:1:)", s)
	}
	t := Target{Path: map[string]string{}}
	for _, kv := range strings.Split(body, ",") {
		if strings.TrimSpace(kv) == "" {
			continue
		}
		k, v, ok := strings.Cut(kv, "=")
		k, v = strings.ToLower(strings.TrimSpace(k)), strings.Trim(strings.TrimSpace(v), `'"`)
		if !ok || !slices.Contains(pathSpecKeys, k) {
			return Target{}, fmt.Errorf("invalid path spec %q: unknown field %q", s, strings.TrimSpace(kv))
		}
		t.Path[k] = v
	}
	if err := fillPathSpec(&t, name); err != nil {
		return Target{}, fmt.Errorf("invalid path spec %q: %v", s, err)
	}
	return t, nil
}

func fillPathSpec(t *Target, class string) error {
	t.Local = t.Path["end_port"]
	if class == "IBDRPath" {
		dr := strings.ReplaceAll(t.Path["drpath"], ":", ",")
		if dr == "" {
			return fmt.Errorf("IBDRPath needs drPath")
		}
		p, err := ParseDRPath(dr)
		t.Kind, t.DRPath = ByDRPath, p
		return err
	}
	for k, v := range t.Path {
		switch k {
		case "dgid", "sgid":
			if _, err := ParseGID(v); err != nil {
				return err
			}
		case "end_port", "drpath":
		default:
			if _, err := ParseUint(v, 32); err != nil {
				return fmt.Errorf("%s: %v", k, err)
			}
		}
	}
	switch {
	case t.Path["dgid"] != "":
		t.Kind = ByGID
		t.GID, _ = ParseGID(t.Path["dgid"])
	case t.Path["dlid"] != "":
		lid, err := ParseLID(t.Path["dlid"])
		t.Kind, t.LID = ByLID, lid
		return err
	default:
		return fmt.Errorf("IBPath needs DLID or DGID")
	}
	return nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// ByName is a target named by its NodeDescription or node-name-map name
// ("leaf01"), resolved from the fabric (internal/query).
const ByName Kind = ByDRPath + 1

// IsName reports whether s, which is no LID, GUID, GID or directed route,
// can be a node name: it starts with a letter, so that a mistyped number
// or path ("1x", "0,x") stays an error.
func IsName(s string) bool {
	s = strings.TrimSpace(s)
	if s == "" {
		return false
	}
	c := s[0]
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

// ParseTargetOrName is ParseTarget that also takes a node name: a string
// that is no other kind of target, starts with a letter, and comes with
// none of -D/-L/-G. The name is resolved later (query.Client.ResolveName).
func ParseTargetOrName(s string, f TypeFlags) (Target, error) {
	t, err := ParseTarget(s, f)
	if err != nil && !f.Direct && !f.LID && !f.GUID && IsName(s) && !strings.ContainsAny(s, ",(%") {
		return Target{Kind: ByName, Name: strings.TrimSpace(s)}, nil
	}
	return t, err
}
