package jsonv

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/netip"
	"slices"
	"sort"
	"strings"
)

// Violation is one place where a document breaks a rule of the vocabulary.
type Violation struct {
	Path string // where: "$.nodes[0].ports[1].width"
	Rule string // what is wrong
}

func (v Violation) String() string { return v.Path + ": " + v.Rule }

// Check applies to a JSON document the rules of the vocabulary that a
// program can check (docs/json.md, "Rules"): key spelling, the form of
// GUIDs, GIDs, LIDs, widths, node types, rates, masks, texts and times,
// and the shape of target and link-end objects. It returns nil for a
// document that follows them; a document that is not JSON is one
// violation.
func Check(doc []byte) []Violation {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return []Violation{{"$", "not JSON: " + err.Error()}}
	}
	var c checker
	c.value("$", "", v)
	return c.out
}

type checker struct{ out []Violation }

func (c *checker) bad(path, format string, args ...any) {
	c.out = append(c.out, Violation{path, fmt.Sprintf(format, args...)})
}

// The key sets below are slices, not maps: jsonv is linked into every
// command, Check runs only in tests, and a package-level map is built at
// every start of the program.

// Allowed keys of the shared objects (Target, LinkEnd).
var (
	targetKeys  = []string{"route", "lid", "dr_path", "dr_slid", "guid", "gid", "name", "text"}
	linkEndKeys = []string{"node_guid", "node_name", "node_type", "port", "external_port", "port_guid", "lid"}
	routes      = []string{string(RouteLID), string(RouteDR), string(RouteCombined), string(RouteGID)}
	nodeTypes   = []string{string(CA), string(Switch), string(Router)}
	widths      = []string{"1X", "2X", "4X", "8X", "12X"}
)

// linkEndKeyNames are the keys whose value is a link end: the remote side
// of a port, the two ends of a link.
var linkEndKeyNames = []string{"remote", "a", "b"}

// nameKeys are the keys ending in _name that hold a name, not the text of
// an enumeration (which would be *_text); so do all *_node_name keys
// (dest_node_name). Sorted: the message lists them.
var nameKeys = []string{"ca_name", "device_name", "file_name", "host_name", "node_name", "service_name"}

// timeSuffixes are unit suffixes of times other than _ms.
var timeSuffixes = []string{"_us", "_usec", "_ns", "_sec", "_secs", "_seconds", "_msec"}

// value checks v, found under key (the key of the object member, or of the
// array holding it) at path.
func (c *checker) value(path, key string, v any) {
	switch v := v.(type) {
	case map[string]any:
		c.object(path, key, v)
	case []any:
		for i, e := range v {
			c.value(fmt.Sprintf("%s[%d]", path, i), key, e)
		}
	default:
		c.scalar(path, key, v)
	}
}

func (c *checker) object(path, key string, m map[string]any) {
	switch {
	case key == "target":
		c.shape(path, m, targetKeys, "target")
		if r, ok := m["route"].(string); !ok || !slices.Contains(routes, r) {
			c.bad(path, "target route %v is not lid, dr, combined or gid", m["route"])
		}
	case slices.Contains(linkEndKeyNames, key):
		c.shape(path, m, linkEndKeys, "link end")
		if _, ok := m["node_guid"]; !ok {
			c.bad(path, "a link end has node_guid")
		}
		if _, ok := m["port"]; !ok {
			c.bad(path, "a link end has port")
		}
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		p := path + "." + k
		c.key(p, k, m)
		c.value(p, k, m[k])
	}
}

// shape reports the keys of m that an object of its kind does not have.
func (c *checker) shape(path string, m map[string]any, allowed []string, what string) {
	for k := range m {
		if !slices.Contains(allowed, k) {
			c.bad(path, "%s has no key %q", what, k)
		}
	}
}

// key checks the rules about a member's name and its siblings.
func (c *checker) key(path, k string, m map[string]any) {
	if !isSnakeCase(k) {
		c.bad(path, "key is not snake_case")
	}
	if strings.HasSuffix(k, "_name") && !slices.Contains(nameKeys, k) && !strings.HasSuffix(k, "_node_name") {
		c.bad(path, "an enumeration's text is <name>_text; _name only for names (%v)", nameKeys)
	}
	for _, s := range timeSuffixes {
		if (strings.HasSuffix(k, s) && !strings.Contains(k, "_per_")) || k == "seconds" {
			c.bad(path, "times are in milliseconds, key *_ms")
		}
	}
	if base, ok := strings.CutSuffix(k, "_text"); ok && base != "node_type" {
		// (node_type is the vocabulary's name of the type; its _text
		// libibmad's "Channel Adapter")
		if _, isText := m[base].(string); isText {
			c.bad(path, "%s is a text beside %s: the value is a number, its text only in _text", base, k)
		}
	}
	if base, ok := strings.CutSuffix(k, "_names"); ok && strings.Contains(base, "mask") {
		if _, ok := m[base]; !ok {
			c.bad(path, "mask names without the mask %s", base)
		}
	}
	if k == "type" {
		if s, ok := m[k].(string); ok && slices.Contains(nodeTypes, strings.ToLower(s)) {
			c.bad(path, "a node's type is key node_type")
		}
	}
}

// scalar checks a value by its key's name.
func (c *checker) scalar(path, key string, v any) {
	s, isString := v.(string)
	_, isNumber := v.(json.Number)
	if v == nil {
		return // absent (a secret without -K)
	}
	switch {
	case key == "target":
		c.bad(path, "target %v is not an object with a route", v)
	case key == "node_type":
		if !isString || !slices.Contains(nodeTypes, s) {
			c.bad(path, "node_type %v is not ca, switch or router", v)
		}
	case key == "width" || strings.HasSuffix(key, "_width"):
		if !isString || !slices.Contains(widths, s) {
			c.bad(path, "width %v is not 1X, 2X, 4X, 8X or 12X", v)
		}
	case strings.HasSuffix(key, "_gbps"), strings.HasSuffix(key, "_bytes"), strings.HasSuffix(key, "_ms"):
		if !isNumber {
			c.bad(path, "%v is not a number", v)
		}
	case key == "lid" || strings.HasSuffix(key, "_lid") || strings.HasSuffix(key, "slid") || strings.HasSuffix(key, "dlid"):
		if !isNumber {
			c.bad(path, "LID %v is not a number", v)
		}
	case strings.HasSuffix(key, "guid") || strings.HasSuffix(key, "guids"):
		if !isString || !isGUIDText(s) {
			c.bad(path, "GUID %v is not \"0x\" and 16 hex digits", v)
		}
	case strings.HasSuffix(key, "gid") || strings.HasSuffix(key, "gids"):
		a, err := netip.ParseAddr(s)
		if !isString || err != nil || !a.Is6() || a.Zone() != "" || a.String() != s {
			c.bad(path, "GID %v is not in RFC 5952 form", v)
		}
	case isString && (key == "state" || strings.HasSuffix(key, "_state") || key == "speed" || strings.HasSuffix(key, "_speed") || key == "rate"):
		c.bad(path, "%q is a text: an enumeration or rate is a number, its text in <name>_text", s)
	case strings.Contains(key, "capability_mask") && !strings.HasSuffix(key, "_names"):
		if !isNumber {
			c.bad(path, "capability mask %v is not a number", v)
		}
	case strings.HasSuffix(key, "_text") || strings.HasSuffix(key, "_names"):
		if !isString {
			c.bad(path, "text %v is not a string", v)
		}
	}
}

// isSnakeCase says whether k is lower-case snake_case: a letter, then
// letters, digits and underscores.
func isSnakeCase(k string) bool {
	for i, c := range k {
		if !(c >= 'a' && c <= 'z' || i > 0 && (c >= '0' && c <= '9' || c == '_')) {
			return false
		}
	}
	return k != ""
}

// isGUIDText says whether s is a GUID as the vocabulary writes it: "0x"
// and 16 lower-case hex digits.
func isGUIDText(s string) bool {
	digits, ok := strings.CutPrefix(s, "0x")
	if !ok || len(digits) != 16 {
		return false
	}
	for _, c := range digits {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}
