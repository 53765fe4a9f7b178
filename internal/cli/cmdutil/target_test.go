package cmdutil

import (
	"fmt"
	"testing"
)

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

// str2drpath reads each hop with atoi: decimal ("08" is 8, not octal),
// up to the first non-digit, cut to a byte.
func TestParseCDRPathReadsAsAtoi(t *testing.T) {
	for in, want := range map[string]string{
		"0,08,010": "[0 8 10]", "0,8x,abc": "[0 8 0]", "0,-1": "[0 255]", "0,257": "[0 1]", "0,": "[0]",
	} {
		got, ok := ParseCDRPath(in)
		if !ok || fmt.Sprint(got) != want {
			t.Errorf("ParseCDRPath(%q) = %v, %v; want %s", in, got, ok, want)
		}
	}
	if _, ok := ParseCDRPath(""); ok {
		t.Error(`ParseCDRPath("") is a path`)
	}
}
