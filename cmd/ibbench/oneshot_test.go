package main

import (
	"debug/buildinfo"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
	"time"
)

// The trivial program is built with the flags and environment the ibtool
// binary records, and nothing else of its settings.
func TestTrivialBuildRepeatsIbtoolsSettings(t *testing.T) {
	info := &buildinfo.BuildInfo{Settings: []debug.BuildSetting{
		{Key: "-buildmode", Value: "pie"}, {Key: "-compiler", Value: "gc"}, {Key: "-ldflags", Value: "-s -w -X a.b=c"},
		{Key: "-trimpath", Value: "true"}, {Key: "CGO_ENABLED", Value: "0"}, {Key: "GOARCH", Value: "amd64"},
		{Key: "GOAMD64", Value: "v1"}, {Key: "vcs.revision", Value: "abc"}, {Key: "GOOS", Value: "linux"},
	}}
	args, env := trivialBuild(info)
	if want := []string{"-buildmode=pie", "-ldflags=-s -w -X a.b=c", "-trimpath"}; !slices.Equal(args, want) {
		t.Errorf("args = %q, want %q", args, want)
	}
	if want := []string{"CGO_ENABLED=0", "GOARCH=amd64", "GOAMD64=v1", "GOOS=linux"}; !slices.Equal(env, want) {
		t.Errorf("env = %q, want %q", env, want)
	}
	args, _ = trivialBuild(&buildinfo.BuildInfo{Settings: []debug.BuildSetting{{Key: "-trimpath", Value: "false"}}})
	if len(args) != 0 {
		t.Errorf("-trimpath=false gives args %q", args)
	}
}

// The C tool's loop preloads umad2sim for each call, not for the shell;
// every loop stops at the first failure.
func TestLoopScript(t *testing.T) {
	b := &oneShotBench{links: "/x/bin", trivial: "/x/trivial-go"}
	c, err := b.loopScript(oneC)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(c, "do LD_PRELOAD=") || !strings.Contains(c, "/usr/sbin/perfquery 7 $((i % 3 + 1)) || exit 1") {
		t.Errorf("C loop: %s", c)
	}
	ours, _ := b.loopScript(oneIbtool)
	if strings.Contains(ours, "LD_PRELOAD") || !strings.Contains(ours, "do /x/bin/perfquery 7 ") || !strings.Contains(ours, "-lt 200 ") {
		t.Errorf("ibtool loop: %s", ours)
	}
}

func samples(wall time.Duration, rssKB int64, n int) []oneSample {
	var ss []oneSample
	for i := range n {
		ss = append(ss, oneSample{wall: wall + time.Duration(i)*time.Microsecond, rssKB: rssKB})
	}
	return ss
}

// Each target is judged on the medians: the wall time against the C
// tool's, --help against 1.5 times the trivial program's, the RSS against
// 2 MB above the trivial program's.
func TestOneShotTargets(t *testing.T) {
	help := oneShotRow{cmd: oneShotCmds[0]}
	help.samples[oneC] = samples(2*time.Millisecond, 1800, 5)
	help.samples[oneIbtool] = samples(3*time.Millisecond, 3900, 5)
	help.samples[oneTrivial] = samples(2*time.Millisecond, 1800, 5)
	got := help.targets()
	if !strings.HasPrefix(got.wall, "no ") || !strings.HasPrefix(got.help, "yes (1.50x") || !strings.HasPrefix(got.rss, "no (+2.1 MB") {
		t.Errorf("--help targets = %+v", got)
	}
	q := oneShotRow{cmd: oneShotCmds[1]}
	q.samples[oneC] = samples(15*time.Millisecond, 2500, 5)
	q.samples[oneIbtool] = samples(9*time.Millisecond, 3600, 5)
	q.samples[oneTrivial] = samples(2*time.Millisecond, 1700, 5)
	got = q.targets()
	if !strings.HasPrefix(got.wall, "yes ") || got.help != "-" || !strings.HasPrefix(got.rss, "yes (+1.9 MB") {
		t.Errorf("perfquery targets = %+v", got)
	}
	q.samples[oneIbtool][2].failed = "exit 1"
	if got := q.targets(); got.wall != "-" || got.rss != "-" {
		t.Errorf("a failed run still judged: %+v", got)
	}
}

// ibtool's output is identical when every run of it and of the C tool
// printed the same; the usage row is never compared.
func TestOneShotIdentical(t *testing.T) {
	r := oneShotRow{cmd: oneShotCmds[1]}
	r.samples[oneC] = samples(time.Millisecond, 1, 3)
	r.samples[oneIbtool] = samples(time.Millisecond, 1, 3)
	if got := r.identical(); got != "yes" {
		t.Errorf("identical = %q", got)
	}
	r.samples[oneIbtool][1].output[0] = 1
	if got := r.identical(); got != "no" {
		t.Errorf("a differing run: identical = %q", got)
	}
	if got := (oneShotRow{cmd: oneShotCmds[0]}).identical(); got != "n/a (usage)" {
		t.Errorf("usage row: identical = %q", got)
	}
}

// A binary's stripping is read from its sections: this test binary has a
// symbol table and DWARF, a -s -w build has neither.
func TestStrippedFlags(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "main.go")
	if err := os.WriteFile(src, []byte("package main\n\nfunc main() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for ldflags, want := range map[string]string{"": "", "-s -w": "-s -w", "-w": "-w"} {
		bin := filepath.Join(dir, "p"+strings.ReplaceAll(ldflags, " ", ""))
		cmd := exec.Command("go", "build", "-ldflags="+ldflags, "-o", bin, src)
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build: %v\n%s", err, out)
		}
		if got, err := strippedFlags(bin); err != nil || got != want {
			t.Errorf("built with -ldflags=%q: strippedFlags = %q, %v; want %q", ldflags, got, err, want)
		}
	}
}
