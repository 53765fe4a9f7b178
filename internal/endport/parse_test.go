package endport

import (
	"bytes"
	"strings"
	"testing"
)

func TestParseLID(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want uint16
		err  string
	}{
		{"12", 12, ""},
		{"0xc", 12, ""},
		{"0XC", 12, ""},
		{"014", 12, ""}, // strtoul base 0: octal
		{"49151", 0xBFFF, ""},
		{"0", 0, "unicast LID is 1.."},
		{"49152", 0, "unicast LID is 1.."},
		{"65536", 0, "too large"},
		{"abc", 0, "not a number"},
		{"", 0, "not a number"},
		{"-1", 0, "not a number"},
		{"0,1,3", 0, "use -D"},
	} {
		got, err := ParseLID(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseLID(%q) error = %v, want one containing %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseLID(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
}

func TestParseDRPath(t *testing.T) {
	long := "0" + strings.Repeat(",1", 64)
	for _, tc := range []struct {
		in   string
		want []byte
		err  string
	}{
		{"0,1,3", []byte{0, 1, 3}, ""},
		{"0,1,3,", []byte{0, 1, 3}, ""},
		{"0", []byte{0}, ""},
		{"0,", []byte{0}, ""},
		{"0,254", []byte{0, 254}, ""},
		{"1,2", nil, "start at the local port 0"},
		{"1", nil, "start at the local port 0"},
		{"0,256", nil, "not a port number"},
		{"0,x,1", nil, `hop 1 "x"`},
		{"0,,1", nil, "hop 1"},
		{"0,0", nil, "no egress port"},
		{long, nil, "at most 63"},
	} {
		got, err := ParseDRPath(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseDRPath(%q) error = %v, want one containing %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || !bytes.Equal(got, tc.want) {
			t.Errorf("ParseDRPath(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}
