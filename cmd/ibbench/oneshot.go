package main

// The one-shot rows: a single query per process, as scripts and the
// exporters sites run today call the tools once per port. There a
// process's fixed cost (exec, the dynamic loader, the Go runtime, package
// initialisation, the pages it touches) is most of its time, so each row
// sets ibtool against the C tool and against a trivial Go program built
// with ibtool's own build settings: the least a Go binary built that way
// costs.

import (
	"context"
	"crypto/sha256"
	"debug/buildinfo"
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ibtool/ibtool/internal/simfabric"
)

// The tools of a one-shot row.
const (
	oneC       = iota // the infiniband-diags tool
	oneIbtool         // ibtool, through a link named like the C tool
	oneTrivial        // a Go program that prints one line
	nOneTools
)

var oneToolNames = [nOneTools]string{"C", "ibtool", "trivial Go"}

const (
	// oneShotHost is the CA the one-shot commands run at: not OpenSM's.
	oneShotHost = "Hca2"
	// oneShotLID is the switch they query: Switch2 of the tiny fabric,
	// whose LID the topology presets (OpenSM keeps it).
	oneShotLID = "7"
	// loopCalls is how many perfquery calls the loop row makes, over the
	// switch's ports 1-3 in turn (port 4 leads to Switch1, so its
	// counters count the queries themselves and differ run by run).
	loopCalls = 200
	loopPorts = 3
)

// oneShotCmd is one row: a C tool's command line, run by every tool.
type oneShotCmd struct {
	args []string // the C tool's name and arguments
	// fabric: the command queries the fabric, so the C tool runs through
	// umad2sim; without it (--help) the C tool runs as it is, its fastest.
	fabric bool
	// exitCode is the status every tool exits with (the C tools' usage
	// exits 2).
	exitCode int
	// loop: a shell loop of loopCalls calls, over the switch's ports.
	loop bool
}

func (c oneShotCmd) label() string {
	if c.loop {
		return fmt.Sprintf("%d x `perfquery %s P` (shell loop, P = 1-%d)", loopCalls, oneShotLID, loopPorts)
	}
	return "`" + strings.Join(c.args, " ") + "`"
}

var oneShotCmds = []oneShotCmd{
	{args: []string{"perfquery", "--help"}, exitCode: 2},
	{args: []string{"perfquery", oneShotLID, "1"}, fabric: true},
	{args: []string{"smpquery", "nodeinfo", oneShotLID}, fabric: true},
	{args: []string{"sminfo"}, fabric: true},
	{args: []string{"ibaddr"}, fabric: true},
	{args: []string{"perfquery"}, fabric: true, loop: true},
}

// oneSample is one run of one tool.
type oneSample struct {
	wall   time.Duration
	cpu    time.Duration // user and system, the process and its children
	faults int64         // minor page faults, the same
	rssKB  int64         // peak RSS (GNU time's %M)
	output [sha256.Size]byte
	failed string
}

// oneShotRow is one command's samples per tool.
type oneShotRow struct {
	cmd     oneShotCmd
	samples [nOneTools][]oneSample
}

// oneShotBench holds what the rows run: the fabric, a directory of links
// to ibtool named like the C tools, and the trivial program.
type oneShotBench struct {
	fab     *simfabric.Fabric
	dir     string
	links   string // directory of the links to ibtool
	trivial string // the trivial Go program
	runs    int
}

// benchOneShot starts the small fabric and runs every one-shot row, runs
// times per tool (the loop row loopRuns times), rotating which tool goes
// first.
func benchOneShot(topology, ibtool string, runs, loopRuns int) ([]oneShotRow, error) {
	dir, err := os.MkdirTemp("", "ibbench-oneshot-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	b := &oneShotBench{dir: dir, links: filepath.Join(dir, "bin"), runs: runs}
	if err := os.Mkdir(b.links, 0o755); err != nil {
		return nil, err
	}
	for _, c := range oneShotCmds {
		link := filepath.Join(b.links, c.args[0])
		if _, err := os.Lstat(link); err != nil {
			if err := os.Symlink(ibtool, link); err != nil {
				return nil, err
			}
		}
	}
	progress("one-shot: building the trivial Go program as ibtool was built")
	if b.trivial, err = buildTrivial(ibtool, dir); err != nil {
		return nil, err
	}
	progress("one-shot: starting ibsim and OpenSM on %s", topology)
	b.fab, err = simfabric.Start(context.Background(), simfabric.Options{Topology: topology, RunTimeout: time.Minute,
		// No periodic sweeps: they would move the queried port's counters.
		OpenSMFlags: []string{"-s", "0"}})
	if err != nil {
		return nil, err
	}
	defer b.fab.Stop()
	var rows []oneShotRow
	for _, c := range oneShotCmds {
		n := runs
		if c.loop {
			n = loopRuns
		}
		r := oneShotRow{cmd: c}
		for i := range n {
			for k := range nOneTools {
				t := (i + k) % nOneTools
				r.samples[t] = append(r.samples[t], b.run(c, t))
			}
		}
		progress("one-shot %s: %s", c.label(), r.summary())
		rows = append(rows, r)
	}
	return rows, nil
}

// argv is a tool's command line for c: the C tool found where Debian
// installs it, ibtool through its link, the trivial program with the same
// arguments (which it ignores).
func (b *oneShotBench) argv(c oneShotCmd, tool int, args []string) ([]string, error) {
	switch tool {
	case oneC:
		bin, err := exec.LookPath(filepath.Join("/usr/sbin", args[0]))
		if err != nil {
			return nil, err
		}
		return append([]string{bin}, args[1:]...), nil
	case oneIbtool:
		return append([]string{filepath.Join(b.links, args[0])}, args[1:]...), nil
	}
	return append([]string{b.trivial}, args[1:]...), nil
}

// env is the tool's environment: attached to the bench host, the C tool
// through umad2sim where it queries the fabric.
func (b *oneShotBench) env(c oneShotCmd, tool int) []string {
	env := b.fab.Env(oneShotHost)
	if tool == oneC && c.fabric && !c.loop {
		env = append(env, "LD_PRELOAD="+simfabric.Umad2Sim)
	}
	return env
}

// run runs one tool of c twice: once directly, timed, with its CPU time
// and page faults from the kernel's accounting, and once under GNU time
// for its peak RSS (a child Go starts inherits its parent's peak RSS,
// since Go starts children with vfork). The loop runs once, under GNU
// time: its wall time is 200 processes', which GNU time's start does not
// change.
func (b *oneShotBench) run(c oneShotCmd, tool int) oneSample {
	if c.loop {
		script, err := b.loopScript(tool)
		if err != nil {
			return oneSample{failed: err.Error()}
		}
		return b.measure([]string{"/bin/sh", "-c", script}, b.env(c, tool), 0, true)
	}
	argv, err := b.argv(c, tool, c.args)
	if err != nil {
		return oneSample{failed: err.Error()}
	}
	exit := c.exitCode
	if tool == oneTrivial {
		exit = 0
	}
	s := b.measure(argv, b.env(c, tool), exit, false)
	if s.failed == "" {
		withRSS := b.measure(argv, b.env(c, tool), exit, true)
		s.rssKB, s.failed = withRSS.rssKB, withRSS.failed
	}
	return s
}

// loopScript is the shell loop of the loop row for a tool: loopCalls
// calls of perfquery over the switch's ports, stopping at the first
// failure.
func (b *oneShotBench) loopScript(tool int) (string, error) {
	argv, err := b.argv(oneShotCmd{}, tool, []string{"perfquery"})
	if err != nil {
		return "", err
	}
	pre := ""
	if tool == oneC {
		// For the C tool's processes only, not the shell's.
		pre = "LD_PRELOAD=" + simfabric.Umad2Sim + " "
	}
	return fmt.Sprintf("i=0; while [ $i -lt %d ]; do %s%s %s $((i %% %d + 1)) || exit 1; i=$((i + 1)); done",
		loopCalls, pre, argv[0], oneShotLID, loopPorts), nil
}

// measure runs argv in a scratch directory (umad2sim writes its sysfs
// there) with stdout to a file, which is hashed afterwards. Under GNU
// time (withTime) it also reads the peak RSS.
func (b *oneShotBench) measure(argv, env []string, exitCode int, withTime bool) oneSample {
	scratch, err := os.MkdirTemp(b.dir, "run-")
	if err != nil {
		return oneSample{failed: err.Error()}
	}
	defer os.RemoveAll(scratch)
	out, err := os.Create(filepath.Join(scratch, "stdout"))
	if err != nil {
		return oneSample{failed: err.Error()}
	}
	defer out.Close()
	rssFile := filepath.Join(scratch, "rss")
	if withTime {
		argv = append([]string{timeCommand, "-o", rssFile, "-f", "%M"}, argv...)
	}
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env, cmd.Dir, cmd.Stdout = env, scratch, out
	var stderr strings.Builder
	cmd.Stderr = &stderr
	start := time.Now()
	err = cmd.Run()
	s := oneSample{wall: time.Since(start)}
	var exit *exec.ExitError
	switch {
	case ctx.Err() != nil:
		return oneSample{failed: fmt.Sprintf("%s: no result after %v", filepath.Base(argv[0]), runTimeout)}
	case err != nil && !(errors.As(err, &exit) && exit.ExitCode() == exitCode):
		return oneSample{failed: fmt.Sprintf("%s: %v: %s", strings.Join(argv, " "), err, firstLine(stderr.String()))}
	case err == nil && exitCode != 0:
		return oneSample{failed: fmt.Sprintf("%s: exit 0, want %d", strings.Join(argv, " "), exitCode)}
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		s.cpu = time.Duration(syscall.TimevalToNsec(ru.Utime) + syscall.TimevalToNsec(ru.Stime))
		s.faults = ru.Minflt
	}
	if withTime {
		text, err := os.ReadFile(rssFile)
		if err != nil {
			return oneSample{failed: err.Error()}
		}
		s.rssKB, _ = strconv.ParseInt(lastLine(string(text)), 10, 64)
	}
	text, err := os.ReadFile(out.Name())
	if err != nil {
		return oneSample{failed: err.Error()}
	}
	s.output = sha256.Sum256([]byte(activityRE.ReplaceAllString(string(text), "activity count N")))
	return s
}

// activityRE is sminfo's SM activity count, which OpenSM's sweeps
// advance between runs.
var activityRE = regexp.MustCompile(`activity count \d+`)

// buildTrivial builds, in dir, a Go program that prints one line, with
// the build settings the ibtool binary records (go version -m): the same
// Go, -buildmode, -ldflags, -trimpath, tags and CGO_ENABLED. With
// -trimpath the go command records no -ldflags, so whether ibtool was
// stripped (-s, -w) is read from its sections.
func buildTrivial(ibtool, dir string) (string, error) {
	info, err := buildinfo.ReadFile(ibtool)
	if err != nil {
		return "", fmt.Errorf("%s: %v", ibtool, err)
	}
	stripped, err := strippedFlags(ibtool)
	if err != nil {
		return "", err
	}
	src := filepath.Join(dir, "trivial")
	if err := os.Mkdir(src, 0o755); err != nil {
		return "", err
	}
	files := map[string]string{
		"go.mod":  "module trivial\n\ngo 1.22\n",
		"main.go": "package main\n\nimport \"os\"\n\nfunc main() { os.Stdout.WriteString(\"one line\\n\") }\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(src, name), []byte(text), 0o644); err != nil {
			return "", err
		}
	}
	bin := filepath.Join(dir, "trivial-go")
	args, env := trivialBuild(info)
	if !slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "-ldflags=") }) && stripped != "" {
		args = append(args, "-ldflags="+stripped)
	}
	cmd := exec.Command("go", append(append([]string{"build"}, args...), "-o", bin, ".")...)
	cmd.Dir, cmd.Env = src, append(os.Environ(), append(env, "GOWORK=off", "GOFLAGS=")...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building the trivial program (go build %s): %v: %s", strings.Join(args, " "), err, out)
	}
	return bin, nil
}

// strippedFlags is the -ldflags that strip a binary as bin is: -s
// without a symbol table, -w without DWARF.
func strippedFlags(bin string) (string, error) {
	f, err := elf.Open(bin)
	if err != nil {
		return "", err
	}
	defer f.Close()
	var flags []string
	if f.Section(".symtab") == nil {
		flags = append(flags, "-s")
	}
	if f.Section(".debug_info") == nil && f.Section(".zdebug_info") == nil {
		flags = append(flags, "-w")
	}
	return strings.Join(flags, " "), nil
}

// trivialBuild is the go build flags and environment that reproduce the
// build settings of info.
func trivialBuild(info *buildinfo.BuildInfo) (args, env []string) {
	for _, s := range info.Settings {
		switch s.Key {
		case "-buildmode", "-ldflags", "-tags", "-gcflags", "-asmflags":
			args = append(args, s.Key+"="+s.Value)
		case "-trimpath":
			if s.Value == "true" {
				args = append(args, "-trimpath")
			}
		case "CGO_ENABLED", "GOARCH", "GOOS", "GOAMD64", "GOARM64", "GOEXPERIMENT":
			env = append(env, s.Key+"="+s.Value)
		}
	}
	return args, env
}

func (r oneShotRow) failure(tool int) string {
	for _, s := range r.samples[tool] {
		if s.failed != "" {
			return s.failed
		}
	}
	return ""
}

// identical says whether every run of ibtool printed what every run of
// the C tool printed (sminfo's activity count aside); the C tools' usage
// is not ibtool's.
func (r oneShotRow) identical() string {
	if !r.cmd.fabric {
		return "n/a (usage)"
	}
	if r.failure(oneC) != "" || r.failure(oneIbtool) != "" {
		return "failed"
	}
	want := r.samples[oneC][0].output
	for _, t := range []int{oneC, oneIbtool} {
		for _, s := range r.samples[t] {
			if s.output != want {
				return "no"
			}
		}
	}
	return "yes"
}

func (r oneShotRow) median(tool int, f func(oneSample) float64) float64 {
	return median(r.samples[tool], f)
}

func oneWall(s oneSample) float64   { return s.wall.Seconds() }
func oneCPU(s oneSample) float64    { return s.cpu.Seconds() }
func oneRSS(s oneSample) float64    { return float64(s.rssKB) }
func oneFaults(s oneSample) float64 { return float64(s.faults) }

func (r oneShotRow) summary() string {
	var parts []string
	for t := range nOneTools {
		if f := r.failure(t); f != "" {
			parts = append(parts, oneToolNames[t]+" failed: "+f)
			continue
		}
		parts = append(parts, fmt.Sprintf("%s %s (CPU %s, %s, %.0f faults)", oneToolNames[t], msText(r.median(t, oneWall)),
			msText(r.median(t, oneCPU)), mb1(r.median(t, oneRSS)), r.median(t, oneFaults)))
	}
	return strings.Join(parts, "; ") + "; identical " + r.identical()
}

// msText is seconds as milliseconds.
func msText(s float64) string {
	if s >= 1 {
		return fmt.Sprintf("%.2f s", s)
	}
	return fmt.Sprintf("%.1f ms", s*1000)
}

// mb1 is kilobytes as megabytes with one decimal: a one-shot command's
// RSS is a few megabytes, and the target counts them to 2 MB.
func mb1(kb float64) string {
	if kb == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f MB", kb/1024)
}

// The targets of issue U (item 2).
const (
	helpOverTrivial  = 1.5    // --help within 1.5x of the trivial program
	rssOverTrivialKB = 2048.0 // peak RSS at most 2 MB above it
)

// oneShotMarkdown is the one-shot tables and how each row fares against
// the targets.
func oneShotMarkdown(rows []oneShotRow, runs, loopRuns int, started time.Time) string {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	p("Measured %s on %s; load average %s at the end. One invocation per process on the 5-node fabric (testdata/topologies/tiny.net), attached to %s: the C tool (through umad2sim where it queries the fabric; `--help` without it), ibtool through a link named like the C tool, and a Go program that prints one line, built with ibtool's build settings (`go version -m`). Medians of %d runs per tool (the loop: %d), the tools alternating run by run. Wall and CPU time (user and system) of the process, and of all %d processes in the loop's row; peak RSS (GNU time's maximum RSS: of the largest process in the loop); minor page faults (all processes).\n\n",
		started.UTC().Format("2006-01-02 15:04 UTC"), hostInfo(), loadAverage(), oneShotHost, runs, loopRuns, loopCalls)
	p("| command | C wall | ibtool wall | trivial Go wall | ibtool / C | ibtool / trivial | C CPU | ibtool CPU | trivial Go CPU | identical output |\n")
	p("|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		p("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", r.cmd.label(),
			r.cell(oneC, oneWall, msText), r.cell(oneIbtool, oneWall, msText), r.cell(oneTrivial, oneWall, msText),
			r.ratio(oneIbtool, oneC, oneWall), r.ratio(oneIbtool, oneTrivial, oneWall),
			r.cell(oneC, oneCPU, msText), r.cell(oneIbtool, oneCPU, msText), r.cell(oneTrivial, oneCPU, msText), r.identical())
	}
	p("\n| command | C peak RSS | ibtool peak RSS | trivial Go peak RSS | ibtool - trivial | C faults | ibtool faults | trivial Go faults |\n")
	p("|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		diff := "-"
		if r.failure(oneIbtool) == "" && r.failure(oneTrivial) == "" {
			diff = fmt.Sprintf("%+.1f MB", (r.median(oneIbtool, oneRSS)-r.median(oneTrivial, oneRSS))/1024)
		}
		p("| %s | %s | %s | %s | %s | %s | %s | %s |\n", r.cmd.label(),
			r.cell(oneC, oneRSS, mb1), r.cell(oneIbtool, oneRSS, mb1), r.cell(oneTrivial, oneRSS, mb1), diff,
			r.cell(oneC, oneFaults, count), r.cell(oneIbtool, oneFaults, count), r.cell(oneTrivial, oneFaults, count))
	}
	p("\nTargets (issue U): every one-shot command at most as slow as the C tool (wall, median); `--help` within %.1fx of the trivial Go program; a one-shot command's peak RSS at most %.0f MB above the trivial program's.\n\n",
		helpOverTrivial, rssOverTrivialKB/1024)
	p("| command | ibtool wall <= C | --help <= %.1fx trivial | RSS <= trivial + %.0f MB |\n|---|---|---|---|\n", helpOverTrivial, rssOverTrivialKB/1024)
	for _, r := range rows {
		t := r.targets()
		p("| %s | %s | %s | %s |\n", r.cmd.label(), t.wall, t.help, t.rss)
	}
	return b.String()
}

// cell is a tool's median of f, or why it failed.
func (r oneShotRow) cell(tool int, f func(oneSample) float64, text func(float64) string) string {
	if len(r.samples[tool]) == 0 {
		return "-"
	}
	if fail := r.failure(tool); fail != "" {
		return "failed: " + strings.ReplaceAll(firstLine(fail), "|", "/")
	}
	return text(r.median(tool, f))
}

// ratio is tool a's median of f over tool b's.
func (r oneShotRow) ratio(a, b int, f func(oneSample) float64) string {
	if r.failure(a) != "" || r.failure(b) != "" {
		return "-"
	}
	return ratioText(r.median(a, f), r.median(b, f))
}

// oneShotTargets says per row whether ibtool meets each target ("-" where
// a target is not about the row).
type oneShotTargets struct{ wall, help, rss string }

func (r oneShotRow) targets() oneShotTargets {
	t := oneShotTargets{wall: "-", help: "-", rss: "-"}
	if r.failure(oneIbtool) != "" || r.failure(oneC) != "" || r.failure(oneTrivial) != "" {
		return t
	}
	ours, c, trivial := r.median(oneIbtool, oneWall), r.median(oneC, oneWall), r.median(oneTrivial, oneWall)
	t.wall = verdict(ours <= c, "%s against %s", msText(ours), msText(c))
	if !r.cmd.fabric {
		t.help = verdict(ours <= helpOverTrivial*trivial, "%.2fx", ours/trivial)
	}
	over := r.median(oneIbtool, oneRSS) - r.median(oneTrivial, oneRSS)
	t.rss = verdict(over <= rssOverTrivialKB, "%+.1f MB", over/1024)
	return t
}

func verdict(ok bool, format string, a ...any) string {
	s := "no"
	if ok {
		s = "yes"
	}
	return s + " (" + fmt.Sprintf(format, a...) + ")"
}
