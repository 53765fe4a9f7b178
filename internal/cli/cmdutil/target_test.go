package cmdutil

import "testing"

// A scoped GID chooses the local port when -C and -P do not.
func TestScopeLocalPort(t *testing.T) {
	for _, tc := range []struct {
		ca, port, target string
		wantCA, wantPort string
	}{
		{target: "fe80::1%rxe1/1", wantPort: "rxe1/1"},
		{target: "fe80::1%rxe1", wantCA: "rxe1"},
		{target: "fe80::1%2", wantPort: "2"},
		{target: "fe80::1%0x0002c90300001491", wantPort: "0x0002c90300001491"},
		{target: "fe80::1%fe80::2", wantPort: "fe80::2"},
		{target: "fe80::1"},
		{target: "12"},
		{target: "not a target%"},
		{ca: "rxe0", target: "fe80::1%rxe1/1", wantCA: "rxe0"}, // the resolver then refuses the mismatch
		{port: "1", target: "fe80::1%rxe1/1", wantPort: "1"},
	} {
		c := &Common{CA: tc.ca, Port: tc.port}
		ScopeLocalPort(c, tc.target)
		if c.CA != tc.wantCA || c.Port != tc.wantPort {
			t.Errorf("%q (-C %q -P %q): -C %q -P %q; want %q %q", tc.target, tc.ca, tc.port, c.CA, c.Port, tc.wantCA, tc.wantPort)
		}
	}
}
