package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ibtool/ibtool/internal/simfabric"
)

// The tools a row compares.
const (
	cDefault = iota
	cO32
	ours
	nTools
)

var toolNames = [nTools]string{"C default", "C -o 32", "ibtool"}

// sample is one run of one tool.
type sample struct {
	wall   time.Duration
	rssKB  int64
	mads   int64
	output [sha256.Size]byte // of the normalised output: dump_fts prints hundreds of megabytes
	failed string
	// crashed: the tool was killed by a signal (GNU time then exits with
	// 128 and the signal's number).
	crashed bool
	pma     pmaStats // ibtool's --stats, where the row asks for them
}

// row is one command at one latency on one fabric.
type row struct {
	fabric    string
	cmd       command
	latency   time.Duration
	samples   [nTools][]sample
	crashes   int           // C runs killed by a signal and run again
	floor     float64       // the simulator's MADs per second
	relayLate time.Duration // the relay's mean lateness, on the last row of a latency
	relayCPU  time.Duration // the relay's CPU time per packet, on the same row
}

type bencher struct {
	fab       *simfabric.Fabric
	cfg       config
	probeCost int64  // MADs one xmitPkts reading itself sends
	cache     string // the fabric's cache file, for the --load-cache rows
}

// row runs cmd's tools in turn, each round starting with the next tool.
func (b *bencher) row(fabric string, cmd command, lat time.Duration, relay *simfabric.Relay) row {
	r := row{fabric: fabric, cmd: cmd, latency: lat}
	tools := []int{cDefault, ours}
	if cmd.hasO {
		tools = []int{cDefault, cO32, ours}
	}
	for i := 0; i < b.cfg.runs; i++ {
		for k := range tools {
			t := tools[(i+k)%len(tools)]
			if t == cDefault && i >= b.cfg.cDefaultRuns(lat) {
				continue
			}
			s := b.run(cmd, t, relay)
			// The C ibqueryerrors crashes now and then on ibsim's
			// truncated PathRecord table (see runQEC in the cli
			// tests): such a run is run again, twice at most.
			for try := 0; try < 2 && s.crashed && t != ours; try++ {
				r.crashes++
				s = b.run(cmd, t, relay)
			}
			r.samples[t] = append(r.samples[t], s)
		}
	}
	return r
}

// cDefaultRuns is how often the C default runs at a latency: it waits a
// round trip every 2 MADs, 3-20 s a run at 100 us, 15-90 s at 1 ms.
func (c config) cDefaultRuns(lat time.Duration) int {
	switch {
	case lat >= time.Millisecond:
		return min(c.runs, c.slowRuns)
	case lat > 0:
		return min(c.runs, 3)
	}
	return c.runs
}

// run runs one tool of cmd attached to the bench host and measures it;
// the MADs are the change of the host port's PortXmitPkts.
func (b *bencher) run(cmd command, tool int, relay *simfabric.Relay) sample {
	before := b.xmitPkts()
	env := b.fab.Env(attach)
	if relay != nil {
		env = relay.Env(attach)
	}
	var args []string
	switch tool {
	case cDefault:
		args = cmd.c
	case cO32:
		args = append(append([]string{}, cmd.c...), "-o", "32")
	case ours:
		args = append([]string{b.cfg.bin}, cmd.ours...)
		if cmd.stats {
			args = append(args, "--stats")
		}
	}
	if cmd.loadCache {
		args = append(args, "--load-cache", b.cache)
	}
	if tool != ours {
		env = append(env, "LD_PRELOAD="+simfabric.Umad2Sim)
	}
	s := measure(b.fab.Dir(), env, args, cmd.errorsExit)
	s.mads = b.xmitPkts() - before - b.probeCost
	return s
}

// measure runs a command under GNU time, which measures the peak RSS: Go
// starts children with vfork, and a vforked child's ru_maxrss starts at
// its parent's (this program's) peak, while time forks a copy of its own
// small image.
func measure(dir string, env, args []string, errorsExit int) sample {
	rssFile := filepath.Join(dir, "ibbench.rss")
	// umad2sim never times out a MAD: a C tool whose reply got lost waits
	// forever. The whole process group goes at runTimeout.
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, timeCommand, append([]string{"-o", rssFile, "-f", "%M"}, args...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.Env, cmd.Dir = env, dir
	out := &normaliser{sum: sha256.New()}
	var errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = out, &errOut
	start := time.Now()
	err := cmd.Run()
	s := sample{wall: time.Since(start), output: out.digest(), pma: parsePMAStats(errOut.String())}
	var exit *exec.ExitError
	switch {
	case ctx.Err() != nil:
		s.failed = fmt.Sprintf("%s: no result after %v", filepath.Base(args[0]), runTimeout)
	case err != nil && !(errorsExit != 0 && errors.As(err, &exit) && exit.ExitCode() == errorsExit):
		s.failed = fmt.Sprintf("%s: %v: %s", filepath.Base(args[0]), err, firstLine(errOut.String()))
		s.crashed = errors.As(err, &exit) && exit.ExitCode() > 128
	}
	if b, err := os.ReadFile(rssFile); err == nil {
		s.rssKB, _ = strconv.ParseInt(lastLine(string(b)), 10, 64)
	}
	return s
}

// runTimeout bounds one run: the slowest, the C default's dump_fts at 1 ms
// on 2000 nodes, takes about 90 s on a loaded machine.
const runTimeout = 5 * time.Minute

// timeCommand is GNU time (Debian package time), which `make bench`
// installs.
const timeCommand = "/usr/bin/time"

var xmitRE = regexp.MustCompile(`PortXmitPkts:\.*(\d+)`)

// xmitPkts reads the bench host port's 64-bit PortXmitPkts.
func (b *bencher) xmitPkts() int64 {
	r := b.fab.RunC(context.Background(), attach, "perfquery", "-x")
	m := xmitRE.FindStringSubmatch(r.Stdout)
	if m == nil {
		return 0
	}
	n, _ := strconv.ParseInt(m[1], 10, 64)
	return n
}

// scaleRow discovers a big fabric: ibtool a few times, and the C tool
// with -o 32 once, to check the output.
func (b *bencher) scaleRow(label string, nodes int) scaleRow {
	cmd := allCommands[0] // ibnetdiscover
	var s []sample
	for range 3 {
		s = append(s, b.run(cmd, ours, nil))
	}
	c := b.run(cmd, cO32, nil)
	sr := scaleRow{fabric: label, nodes: nodes, ours: s, checked: true, identical: c.failed == "" && c.output == s[0].output}
	if c.failed != "" {
		sr.note = c.failed
	}
	return sr
}

// pmaStats are what ibtool ibqueryerrors --stats says of a run: the PMA
// phase's MADs and rate (after the fabric is walked or loaded), and the
// whole run's.
type pmaStats struct {
	ok      bool
	mads    int64
	rate    float64 // the PMA phase's MADs per second
	allMADs int64
	allRate float64 // every MAD of the run, per second
}

var (
	pmaRE = regexp.MustCompile(`(?m)^ibqueryerrors: PMA phase: (\d+) MADs in [0-9.]+ ms, ([0-9.]+|\+Inf|NaN) MADs/s$`)
	allRE = regexp.MustCompile(`(?m)^ibqueryerrors: fabric and PMA phase: (\d+) MADs in [0-9.]+ ms, ([0-9.]+) MADs/s$`)
)

// parsePMAStats reads the --stats lines of ibtool ibqueryerrors from its
// stderr; ok is false when they are not there.
func parsePMAStats(stderr string) pmaStats {
	m, a := pmaRE.FindStringSubmatch(stderr), allRE.FindStringSubmatch(stderr)
	if m == nil || a == nil {
		return pmaStats{}
	}
	s := pmaStats{ok: true}
	s.mads, _ = strconv.ParseInt(m[1], 10, 64)
	s.rate, _ = strconv.ParseFloat(m[2], 64)
	s.allMADs, _ = strconv.ParseInt(a[1], 10, 64)
	s.allRate, _ = strconv.ParseFloat(a[2], 64)
	return s
}

// lastLine is the last non-empty line of s: GNU time writes a line about
// a non-zero exit status before its format.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

var stampRE = regexp.MustCompile(`^#.*(on|Topology file:).*$`)

// normaliser hashes output line by line, blanking the lines that carry a
// time stamp or a host name.
type normaliser struct {
	sum     hash.Hash
	partial []byte // a line not yet ended
}

func (n *normaliser) Write(b []byte) (int, error) {
	data := append(n.partial, b...)
	for {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			break
		}
		n.line(data[:i+1])
		data = data[i+1:]
	}
	n.partial = append(n.partial[:0], data...)
	return len(b), nil
}

func (n *normaliser) line(l []byte) {
	if len(l) > 0 && l[0] == '#' && stampRE.Match(bytes.TrimSuffix(l, []byte("\n"))) {
		l = []byte("#\n")
	}
	n.sum.Write(l)
}

func (n *normaliser) digest() [sha256.Size]byte {
	if len(n.partial) > 0 {
		n.line(n.partial)
	}
	var d [sha256.Size]byte
	copy(d[:], n.sum.Sum(nil))
	return d
}
