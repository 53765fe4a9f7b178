package main

import (
	"crypto/sha256"
	"fmt"
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
	got := exporterTable([]exporterRow{{fabric: "S2000", plain: plain, gzipped: gz, rssKB: 200 << 10, steadyKB: 60 << 10, concurrentMADs: 100},
		{fabric: "S1000", failed: "no | fabric"}})
	for _, want := range []string{
		"| S2000 | plain | 1.100 s (0.900-1.200) | 0.400 s | 0.45 s | 31.0 MB | 300 | 100 | 100 | 60 MB | 200 MB | no | yes |",
		"| S2000 | gzip | 0.500 s (0.500-0.500) | 0.300 s | 0.30 s | 1.2 MB | 300 | 101 | 100 | 60 MB | 200 MB | yes | yes |",
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

// The PMA figures come from ibtool ibqueryerrors --stats as it prints
// them; stderr without them gives none.
func TestParsePMAStats(t *testing.T) {
	stderr := "ibqueryerrors: PMA phase: 3996 MADs in 120.8 ms, 33066 MADs/s\n" +
		"ibqueryerrors: fabric and PMA phase: 23600 MADs in 555.6 ms, 42474 MADs/s\n" +
		"ibtool: MADs sent 23600, retried 0, lost 0, unmatched replies 0\n"
	got := parsePMAStats(stderr)
	want := pmaStats{ok: true, mads: 3996, rate: 33066, allMADs: 23600, allRate: 42474}
	if got != want {
		t.Errorf("parsePMAStats = %+v, want %+v", got, want)
	}
	for _, s := range []string{"", "ibtool: MADs sent 23600, retried 0, lost 0, unmatched replies 0\n",
		"ibqueryerrors: fabric and PMA phase: 23600 MADs in 555.6 ms, 42474 MADs/s\n"} {
		if got := parsePMAStats(s); got.ok {
			t.Errorf("parsePMAStats(%q) = %+v, want nothing", s, got)
		}
	}
}

// The cache is made for a fabric only when one of its rows reads it, or
// the PMA floor of ibqueryerrors' PMA table needs its LIDs.
func TestNeedsCache(t *testing.T) {
	s2000 := fabricSpec{name: "S2000"}
	s5000 := fabricSpec{name: "S5000", commands: []string{"ibnetdiscover", "ibqueryerrors"}}
	scale := fabricSpec{name: "S10000", scale: true}
	for _, tc := range []struct {
		commands []string
		spec     fabricSpec
		want     bool
	}{
		{[]string{"ibqueryerrors", "ibqueryerrors --load-cache"}, s2000, true},
		{[]string{"ibqueryerrors", "ibchecknet"}, s2000, true},
		{[]string{"ibnetdiscover", "ibchecknet"}, s2000, false},
		{[]string{"ibqueryerrors --load-cache"}, s5000, false},
		{[]string{"ibqueryerrors --load-cache"}, scale, false},
	} {
		if got := needsCache(tc.commands, tc.spec); got != tc.want {
			t.Errorf("needsCache(%q, %s) = %v, want %v", tc.commands, tc.spec.name, got, tc.want)
		}
	}
}

func TestPMATableSetsThePhaseAgainstBothFloors(t *testing.T) {
	stats := pmaStats{ok: true, mads: 4000, rate: 80000, allMADs: 20000, allRate: 50000}
	r := row{fabric: "S2000", cmd: command{name: "ibqueryerrors", stats: true}}
	r.samples[ours] = []sample{{pma: stats}}
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	rep := &report{rows: []row{r}, floors: []floorRow{{fabric: "S2000", madsPerSec: 100000, pmaMadsPerSec: 90000}}}
	rep.pmaTable(p)
	if want := "| S2000 | ibqueryerrors | 4000 | 80000 MADs/s | 0.80 | 90000 MADs/s: 0.89 | 50000 MADs/s | 0.50 |"; !strings.Contains(b.String(), want) {
		t.Errorf("table lacks %q:\n%s", want, b.String())
	}
	b.Reset()
	rep.floors[0].pmaMadsPerSec = 0 // not measured
	rep.pmaTable(p)
	if want := "| 0.80 | - | 50000 MADs/s |"; !strings.Contains(b.String(), want) {
		t.Errorf("without a PMA floor the table lacks %q:\n%s", want, b.String())
	}
}

// The diagnose rows' tables: a row meets its target when the C
// sequence's median over ibtool's reaches it (5 without latency, 20 at
// 1 ms), the offline row when its median CPU is under 1 s.
func TestDiagnoseMarkdown(t *testing.T) {
	seq := func(secs ...float64) (out []seqSample) {
		for _, s := range secs {
			out = append(out, seqSample{sample: sample{wall: time.Duration(s * float64(time.Second))}, tools: make([]time.Duration, len(cSequence))})
		}
		return out
	}
	ours := func(secs ...float64) (out []sample) {
		for _, s := range secs {
			out = append(out, sample{wall: time.Duration(s * float64(time.Second))})
		}
		return out
	}
	rep := &report{cfg: config{runs: 3, slowRuns: 1}, diag: []diagRow{
		{fabric: "S2000", c: seq(3, 3.2, 2.9), ours: ours(0.5, 0.55, 0.7), args: []string{"ibtool", "diagnose"}},
		{fabric: "S2000", latency: time.Millisecond, c: seq(90), ours: ours(5, 5.1, 4)},
	}, offline: []offlineRow{{fabric: "S10000", runs: []cpuSample{{cpu: 800 * time.Millisecond}, {cpu: 1200 * time.Millisecond}, {cpu: 900 * time.Millisecond}}}}}
	md := rep.diagnoseMarkdown()
	for _, want := range []string{
		"| S2000 | none | 3.000 s (2.900-3.200) | 0.550 s (0.500-0.700) | 5.5x | 5x | yes |",
		"| S2000 | 1 ms | 90.000 s, 1 run | 5.000 s (4.000-5.100) | 18.0x | 20x | no |",
		"| 0.90 s (0.80-1.20) |",
		"| yes |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("no %q in:\n%s", want, md)
		}
	}
}
