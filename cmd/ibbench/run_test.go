package main

import (
	"crypto/sha256"
	"testing"
	"time"
)

func digestOf(chunks ...string) [sha256.Size]byte {
	n := &normaliser{sum: sha256.New()}
	for _, c := range chunks {
		n.Write([]byte(c))
	}
	return n.digest()
}

// Outputs that differ only in their time-stamp lines, and however the
// pipe cut them, are the same; any other difference is not.
func TestNormaliserIgnoresOnlyStamps(t *testing.T) {
	a := digestOf("#\n# Topology file: generated on Wed Nov 25 10:00:00 2026\n#\nSwitch 36 \"S-1\"\n[1] \"H-2\"[1]")
	b := digestOf("#\n# Topology file: generated on Thu ", "Nov 26 11:11:11 2026\n#\nSwi", "tch 36 \"S-1\"\n[1] \"H-2\"[1]")
	if a != b {
		t.Error("outputs differing in the stamp line and in chunking hash differently")
	}
	if c := digestOf("#\n# Topology file: generated on Wed Nov 25 10:00:00 2026\n#\nSwitch 36 \"S-1\"\n[2] \"H-2\"[1]"); c == a {
		t.Error("outputs differing in a port hash the same")
	}
	if c := digestOf("#\n# Topology file: generated on Wed Nov 25 10:00:00 2026\n#\nSwitch 36 \"S-1\"\n[1] \"H-2\"[1]\n"); c == a {
		t.Error("a missing final newline goes unnoticed")
	}
}

func TestCDefaultRuns(t *testing.T) {
	c := config{runs: 7, slowRuns: 1}
	for _, tc := range []struct {
		lat  time.Duration
		want int
	}{{0, 7}, {100 * time.Microsecond, 3}, {time.Millisecond, 1}, {10 * time.Millisecond, 1}} {
		if got := c.cDefaultRuns(tc.lat); got != tc.want {
			t.Errorf("cDefaultRuns(%v) = %d, want %d", tc.lat, got, tc.want)
		}
	}
}

func TestDurationText(t *testing.T) {
	for d, want := range map[time.Duration]string{
		100 * time.Microsecond: "100 us", time.Millisecond: "1 ms", 148 * time.Microsecond: "148 us", 2 * time.Second: "2s",
	} {
		if got := durationText(d); got != want {
			t.Errorf("durationText(%v) = %q, want %q", d, got, want)
		}
	}
}
