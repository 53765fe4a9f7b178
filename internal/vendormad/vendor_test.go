package vendormad

import (
	"strings"
	"testing"
)

// get_host_and_domain: "host.domain", no dot without a domain, cut to fit.
func TestHostAndDomain(t *testing.T) {
	s := HostAndDomain(216)
	if s == "" || strings.HasSuffix(s, ".") || strings.HasPrefix(s, ".") {
		t.Errorf("hostAndDomain = %q", s)
	}
	if short := HostAndDomain(3); len(short) > 2 {
		t.Errorf("hostAndDomain(3) = %q: must leave room for the NUL", short)
	}
}
