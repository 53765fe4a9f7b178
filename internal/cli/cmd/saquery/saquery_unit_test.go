package saquery

import (
	"strings"
	"testing"

	"github.com/ibtool/ibtool/internal/ctext"
)

// The C conventions saquery's parsing and printing rely on.
func TestSaqueryCHelpers(t *testing.T) {
	for _, tc := range []struct {
		in string
		v  uint64
		ok bool
	}{
		{"12", 12, true}, {"0x1f", 31, true}, {"010", 8, true}, {"08", 0, true}, {"0x", 0, true}, {" 7", 7, true},
		{"2abc", 2, true}, {"abc", 0, false}, {"", 0, false}, {"-1", 1<<64 - 1, true}, {"+5", 5, true},
		{"99999999999999999999", 1<<64 - 1, true}, {"0XFF", 255, true},
	} {
		if v, ok := ctext.Strtoul(tc.in); v != tc.v || ok != tc.ok {
			t.Errorf("cStrtoul(%q) = %d, %v; want %d, %v", tc.in, v, ok, tc.v, tc.ok)
		}
	}
	for _, tc := range []struct {
		in string
		v  int64
		ok bool
	}{{"-5", -5, true}, {"65535", 65535, true}, {"9223372036854775808", 0, false}, {"-9223372036854775808", -1 << 63, true}} {
		if v, ok := saStrtol(tc.in); v != tc.v || ok != tc.ok {
			t.Errorf("saStrtol(%q) = %d, %v", tc.in, v, ok)
		}
	}
	// glibc's inet_ntop(AF_INET6).
	for in, want := range map[string]string{
		"::":                        "::",
		"::1":                       "::1",
		"::2:3":                     "::0.2.0.3", // glibc: six zero words, an IPv4 tail
		"::1.2.3.4":                 "::1.2.3.4",
		"::ffff:1.2.3.4":            "::ffff:1.2.3.4",
		"fe80::20:0":                "fe80::20:0",
		"fe80:0:0:1:0:0:0:1":        "fe80:0:0:1::1",
		"1:0:0:2:0:0:3:4":           "1::2:0:0:3:4",
		"1:0:2:0:3:0:4:0":           "1:0:2:0:3:0:4:0",
		"ff12:401b:ffff::ffff:ffff": "ff12:401b:ffff::ffff:ffff",
		"1:2:3:4:5:6:7::":           "1:2:3:4:5:6:7:0",
		"1::":                       "1::",
		"0:0:0:0:0:1:0:0":           "::1:0:0",
	} {
		g, err := saParseGID(in)
		if err != nil {
			t.Fatal(err)
		}
		if got := saNtop6(g[:]); got != want {
			t.Errorf("saNtop6(%s) = %s, want %s", in, got, want)
		}
	}
	if !saStrnEqual("abc", "abc\x00def", 64) || saStrnEqual("abc", "abd", 64) || !saStrnEqual(strings.Repeat("x", 70), strings.Repeat("x", 64), 64) {
		t.Error("saStrnEqual")
	}
	for _, s := range []string{"fe80::1%eth0", "1.2.3.4", "", "zz"} {
		if _, err := saParseGID(s); err == nil {
			t.Errorf("saParseGID(%q) accepted", s)
		}
	}
}
