package ctext

import (
	"strings"
	"testing"
)

func TestCStrings(t *testing.T) {
	for in, want := range map[string]string{"abc\x00def": "abc", "abc": "abc", "\x00": "", "": ""} {
		if got := CString([]byte(in)); got != want {
			t.Errorf("CString(%q) = %q, want %q", in, got, want)
		}
	}
	for _, tc := range []struct {
		a, b string
		n    int
		want bool
	}{
		{"abc", "abc\x00def", 64, true},
		{"abc", "abd", 64, false},
		{"abc", "abd", 2, true},
		{strings.Repeat("x", 70), strings.Repeat("x", 64), 64, true},
		{strings.Repeat("x", 70), strings.Repeat("x", 64), 65, false},
		{"", "\x00x", 64, true},
	} {
		if got := StrnEqual(tc.a, tc.b, tc.n); got != tc.want {
			t.Errorf("StrnEqual(%q, %q, %d) = %v", tc.a, tc.b, tc.n, got)
		}
	}
}

// glibc's strerror texts (Python's os.strerror).
func TestStrerrorMatchesGlibc(t *testing.T) {
	for errno, want := range map[int]string{
		0: "Success", 2: "No such file or directory", 5: "Input/output error", 22: "Invalid argument",
		41: "Unknown error 41", 64: "Machine is not on the network", 110: "Connection timed out",
		1000: "Unknown error 1000", -1: "Unknown error -1",
	} {
		if got := Strerror(errno); got != want {
			t.Errorf("Strerror(%d) = %q, want %q", errno, got, want)
		}
	}
}
