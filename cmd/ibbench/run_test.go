package main

import (
	"crypto/sha256"
	"strings"
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

// A scrape's series are its sample lines; the counter-read time is
// ib_scrape_duration_seconds; a body without it is refused.
func TestScrapeStats(t *testing.T) {
	text := "# HELP ib_scrape_duration_seconds Time.\n# TYPE ib_scrape_duration_seconds gauge\nib_scrape_duration_seconds 0.361\n" +
		"# TYPE ib_port_state gauge\nib_port_state{node_guid=\"0x1\",node_name=\"a b\",port=\"1\"} 4\nib_port_state{node_guid=\"0x1\",node_name=\"a b\",port=\"2\"} 1\n"
	series, reads, err := scrapeStats([]byte(text))
	if err != nil || series != 3 || reads != 0.361 {
		t.Errorf("scrapeStats = %d, %v, %v; want 3, 0.361, nil", series, reads, err)
	}
	if _, _, err := scrapeStats([]byte("ib_port_state 4\n")); err == nil {
		t.Error("a body without ib_scrape_duration_seconds passes")
	}
	if _, _, err := scrapeStats([]byte("ib_scrape_duration_seconds x\n")); err == nil {
		t.Error("an unparsable ib_scrape_duration_seconds passes")
	}
}

// The table gives each kind of scrape its median and range, and says
// whether the median is under the target; a failed row says why.
func TestExporterTable(t *testing.T) {
	plain := []scrape{{wall: 900 * time.Millisecond, bytes: 31 << 20, series: 300, reads: 0.3, mads: 100, cpu: 400 * time.Millisecond},
		{wall: 1200 * time.Millisecond, bytes: 31 << 20, series: 300, reads: 0.5, mads: 100, cpu: 500 * time.Millisecond},
		{wall: 1100 * time.Millisecond, bytes: 31 << 20, series: 300, reads: 0.4, mads: 102, cpu: 450 * time.Millisecond}}
	gz := []scrape{{wall: 500 * time.Millisecond, bytes: 1200 << 10, series: 300, reads: 0.3, mads: 101, cpu: 300 * time.Millisecond}}
	got := exporterTable([]exporterRow{{fabric: "S2000", plain: plain, gzipped: gz, rssKB: 200 << 10}, {fabric: "S1000", failed: "no | fabric"}})
	for _, want := range []string{
		"| S2000 | plain | 1.100 s (0.900-1.200) | 0.400 s | 0.45 s | 31.0 MB | 300 | 100 | 200 MB | no |",
		"| S2000 | gzip | 0.500 s (0.500-0.500) | 0.300 s | 0.30 s | 1.2 MB | 300 | 101 | 200 MB | yes |",
		"| S1000 | - | failed: no / fabric |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("table lacks %q:\n%s", want, got)
		}
	}
	if exporterTable(nil) != "" {
		t.Error("a table without exporter rows")
	}
}

// The CPU time of /proc/PID/stat: fields 14 and 15 in clock ticks, the
// command name before them may hold spaces and parentheses.
func TestCPUOfStat(t *testing.T) {
	stat := "4242 (ib tool) (x)) S 1 4242 4242 0 -1 4194560 1000 0 0 0 123 45 0 0 20 0 8 0 100 1000 100\n"
	if got := cpuOfStat(stat); got != 1680*time.Millisecond {
		t.Errorf("cpuOfStat = %v, want 1.68s", got)
	}
	if got := cpuOfStat("garbage"); got != 0 {
		t.Errorf("cpuOfStat(garbage) = %v", got)
	}
}
