package cache

import (
	"strconv"
	"strings"
)

// ExpandName expands a cache file name template the way python-rdma's
// ibtool does (string.Template.safe_substitute): $C and ${CA} (or $CA,
// ${C}) become the CA name, $P and ${PORT} the port number, $A "CA-port";
// "$$" is a "$". Anything else is left as it is, including unknown names
// ("$HOME", "${X}") and a "$" that starts no name.
// Example: ExpandName("~/.ibtool.cache-$A", "mlx5_0", 1) is
// "~/.ibtool.cache-mlx5_0-1".
func ExpandName(name, ca string, port int) string {
	vars := map[string]string{
		"C": ca, "CA": ca,
		"P": strconv.Itoa(port), "PORT": strconv.Itoa(port),
		"A": ca + "-" + strconv.Itoa(port),
	}
	var b strings.Builder
	for {
		i := strings.IndexByte(name, '$')
		if i < 0 {
			b.WriteString(name)
			return b.String()
		}
		b.WriteString(name[:i])
		rest := name[i+1:]
		switch {
		case strings.HasPrefix(rest, "$"):
			b.WriteByte('$')
			name = rest[1:]
		case identLen(rest) > 0:
			n := identLen(rest)
			if v, ok := vars[rest[:n]]; ok {
				b.WriteString(v)
			} else {
				b.WriteString(name[i : i+1+n])
			}
			name = rest[n:]
		case strings.HasPrefix(rest, "{") && identLen(rest[1:]) > 0 && strings.HasPrefix(rest[1+identLen(rest[1:]):], "}"):
			n := identLen(rest[1:])
			if v, ok := vars[rest[1:1+n]]; ok {
				b.WriteString(v)
			} else {
				b.WriteString(name[i : i+3+n])
			}
			name = rest[n+2:]
		default:
			b.WriteByte('$')
			name = rest
		}
	}
}

// identLen is the length of the Python identifier ([_a-zA-Z][_a-zA-Z0-9]*,
// ASCII) at the start of s, 0 if none.
func identLen(s string) int {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
		case c >= '0' && c <= '9' && i > 0:
		default:
			return i
		}
	}
	return len(s)
}
