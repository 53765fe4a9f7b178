// Package simfabric runs a simulated InfiniBand fabric for tests, benchmarks
// and demos: ibsim (the fabric) plus OpenSM (subnet manager and SA) attached
// to it through umad2sim. It also runs the infiniband-diags C tools and
// ibtool against that fabric, with hard timeouts, and compares their results.
//
// Every fabric has its own ibsim socket name and temp dir, so fabrics of
// parallel tests never meet. Every child process runs in its own process
// group with a parent-death signal, so nothing outlives the test binary.
package simfabric

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Paths of the simulator pieces as Debian installs them (ibsim-utils,
// opensm). Binaries are looked up in PATH first.
const (
	Umad2Sim = "/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so"

	DefaultStartTimeout = 60 * time.Second
	DefaultRunTimeout   = 20 * time.Second
)

// ErrNotInstalled is wrapped by Start's error when ibsim, OpenSM or umad2sim
// is missing (install them with `make deps`).
var ErrNotInstalled = errors.New("simulator not installed")

// Options describe the fabric to start.
type Options struct {
	// Topology is the path of an ibsim net file.
	Topology string
	// IbsimFlags are extra ibsim flags, e.g. -N/-S/-P for big fabrics.
	IbsimFlags []string
	// StartTimeout bounds Start, until every linked port is Active
	// (default DefaultStartTimeout).
	StartTimeout time.Duration
	// NoSM starts ibsim alone: ports stay Init, no LIDs, no SA.
	NoSM bool
	// SMHost is the node OpenSM attaches to (SIM_HOST); empty means the
	// first node of the topology.
	SMHost string
	// OpenSMFlags are extra OpenSM flags, e.g. "-l", "1" for LMC 1.
	OpenSMFlags []string
	// RunTimeout is the default hard timeout of Run and RunC
	// (default DefaultRunTimeout).
	RunTimeout time.Duration
	// Remote runs ibsim in its UDP remote mode (ibsim -r) on a free port
	// of the loopback, and every client (OpenSM, the C tools, ibtool)
	// reaches it through IBSIM_SERVER_NAME/IBSIM_SERVER_PORT. A Relay
	// (relay.go) can only stand between clients and a remote ibsim.
	Remote bool
}

// Fabric is a running ibsim, with OpenSM unless Options.NoSM.
type Fabric struct {
	opts     Options
	sockName string
	port     int    // ibsim's UDP base port in remote mode, else 0
	dir      string // temp dir: logs, OpenSM cache, scratch dirs of runs

	ibsim   *child
	opensm  *child
	console *console

	stopOnce sync.Once
	stopErr  error
}

var fabricSerial atomic.Int64

// Start starts ibsim on opts.Topology and, unless opts.NoSM, OpenSM, and
// waits until OpenSM reports the subnet up and every linked port is Active.
// On failure everything started is stopped again.
func Start(ctx context.Context, opts Options) (_ *Fabric, err error) {
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = DefaultStartTimeout
	}
	if opts.RunTimeout <= 0 {
		opts.RunTimeout = DefaultRunTimeout
	}
	if _, err := os.Stat(opts.Topology); err != nil {
		return nil, fmt.Errorf("simfabric: topology: %w", err)
	}
	topo, err := filepath.Abs(opts.Topology)
	if err != nil {
		return nil, fmt.Errorf("simfabric: topology: %w", err)
	}
	if err := Available(!opts.NoSM); err != nil {
		return nil, fmt.Errorf("simfabric: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, opts.StartTimeout)
	defer cancel()

	removeStaleDirs()
	f := &Fabric{opts: opts, sockName: fmt.Sprintf("ibt%dx%d", os.Getpid(), fabricSerial.Add(1))}
	if f.dir, err = os.MkdirTemp("", "simfabric-"+f.sockName+"-"); err != nil {
		return nil, fmt.Errorf("simfabric: %w", err)
	}
	defer func() {
		if err != nil {
			f.Stop()
		}
	}()
	if err := f.startIbsimOnFreePort(ctx, topo); err != nil {
		return nil, err
	}
	if opts.NoSM {
		return f, nil
	}
	if err := f.startOpenSM(); err != nil {
		return nil, err
	}
	if err := f.waitReady(ctx); err != nil {
		return nil, err
	}
	return f, nil
}

// removeStaleDirs removes the temp dirs of fabrics whose process was killed
// before it could call Stop (the children died with it: Pdeathsig).
func removeStaleDirs() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), "simfabric-ibt*"))
	for _, dir := range dirs {
		var pid, n int
		if _, err := fmt.Sscanf(filepath.Base(dir), "simfabric-ibt%dx%d-", &pid, &n); err != nil || pid == os.Getpid() {
			continue
		}
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); os.IsNotExist(err) {
			os.RemoveAll(dir)
		}
	}
}

// startIbsimOnFreePort starts ibsim; in remote mode on UDP ports that
// were free a moment before, trying other ports when another process took
// them in between (ibsim then exits at once).
func (f *Fabric) startIbsimOnFreePort(ctx context.Context, topo string) error {
	if !f.opts.Remote {
		return f.startIbsim(ctx, topo)
	}
	var err error
	for try := 0; try < 5; try++ {
		if f.port, err = freeUDPPorts(simPorts); err != nil {
			return fmt.Errorf("simfabric: %w", err)
		}
		if err = f.startIbsim(ctx, topo); err == nil || ctx.Err() != nil {
			return err
		}
		f.ibsim.stop(time.Second)
	}
	return err
}

// simPorts is how many UDP ports a remote ibsim binds from its base: the
// control port and one per client slot.
const simPorts = 1 + 10

func (f *Fabric) startIbsim(ctx context.Context, topo string) error {
	bin, _ := lookBinary("ibsim")
	args := append([]string{"-s"}, f.opts.IbsimFlags...)
	if f.opts.Remote {
		args = append(args, "-r", "-l", strconv.Itoa(f.port))
	}
	args = append(args, topo)
	cmd := exec.Command(bin, args...)
	cmd.Dir = f.dir
	cmd.Env = append(cleanEnviron(), "IBSIM_SOCKNAME="+f.sockName)
	// The console needs a stdin that never reaches EOF (at EOF ibsim spins
	// at 100% CPU): a pipe we hold open until Stop.
	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("simfabric: %w", err)
	}
	stdoutR, stdoutW, err := os.Pipe()
	if err != nil {
		stdinR.Close()
		stdinW.Close()
		return fmt.Errorf("simfabric: %w", err)
	}
	transcript, err := os.Create(f.path("ibsim.out"))
	if err != nil {
		return fmt.Errorf("simfabric: %w", err)
	}
	cmd.Stdin, cmd.Stdout = stdinR, stdoutW
	f.ibsim, err = startChild(cmd, f.path("ibsim.err"))
	// The child has its copies; ours would keep the pipes from closing.
	stdinR.Close()
	stdoutW.Close()
	if err != nil {
		stdinW.Close()
		stdoutR.Close()
		transcript.Close()
		return fmt.Errorf("simfabric: starting ibsim: %w", err)
	}
	f.console = newConsole(stdinW, stdoutR, transcript)
	go func() {
		<-f.ibsim.exited
		// Unblock the console reader even if some grandchild kept stdout.
		stdoutR.Close()
	}()
	// ibsim reads the console only after parsing the topology and binding its
	// sockets, so the first echo means it is ready for clients.
	ready := make(chan error, 1)
	go func() { _, err := f.console.do(""); ready <- err }()
	select {
	case err = <-ready:
	case <-ctx.Done():
		err = ctx.Err()
	}
	if err != nil {
		return fmt.Errorf("simfabric: ibsim did not start on %s: %w%s", topo, err, f.logTails())
	}
	return nil
}

func (f *Fabric) startOpenSM() error {
	bin, _ := lookBinary("opensm")
	// -d2 flushes the log after every message (we poll it for SUBNET UP);
	// without -B OpenSM stays in the foreground, as our child.
	args := append([]string{"-d2", "-f", f.path("osm.log")}, f.opts.OpenSMFlags...)
	cmd := exec.Command(bin, args...)
	cmd.Dir = f.dir
	cmd.Env = append(cleanEnviron(),
		"LD_PRELOAD="+Umad2Sim,
		"IBSIM_SOCKNAME="+f.sockName,
		"OSM_TMP_DIR="+f.dir,
		"OSM_CACHE_DIR="+f.dir,
	)
	cmd.Env = append(cmd.Env, f.serverEnv()...)
	if f.opts.SMHost != "" {
		cmd.Env = append(cmd.Env, "SIM_HOST="+f.opts.SMHost)
	}
	var err error
	f.opensm, err = startChild(cmd, f.path("osm.out"))
	if err != nil {
		return fmt.Errorf("simfabric: starting opensm: %w", err)
	}
	return nil
}

// waitReady polls until OpenSM has logged SUBNET UP and ibsim's Dump shows
// every linked port Active.
func (f *Fabric) waitReady(ctx context.Context) error {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	var why string
	for {
		why = f.notReady()
		if why == "" {
			return nil
		}
		select {
		case <-f.opensm.exited:
			return fmt.Errorf("simfabric: opensm exited (%v) before the subnet came up%s", f.opensm.err, f.logTails())
		case <-f.ibsim.exited:
			return fmt.Errorf("simfabric: ibsim exited (%v) before the subnet came up%s", f.ibsim.err, f.logTails())
		case <-ctx.Done():
			return fmt.Errorf("simfabric: subnet not up after %v: %s%s", f.opts.StartTimeout, why, f.logTails())
		case <-tick.C:
		}
	}
}

// notReady says why the fabric is not ready yet, or "" when it is.
func (f *Fabric) notReady() string {
	log, _ := os.ReadFile(f.path("osm.log"))
	if !strings.Contains(string(log), "SUBNET UP") {
		return "OpenSM has not logged SUBNET UP"
	}
	dump, err := f.console.do("Dump")
	if err != nil {
		return err.Error()
	}
	if bad := inactivePorts(dump); len(bad) > 0 {
		return fmt.Sprintf("%d linked ports not Active, e.g. %q", len(bad), bad[0])
	}
	return ""
}

// inactivePorts returns the port lines of an ibsim Dump that are linked but
// not Active. A linked port line names its peer in quotes ("Sma Port" is a
// switch's port 0); unlinked ports are Down and have no peer.
func inactivePorts(dump string) []string {
	var bad []string
	sc := bufio.NewScanner(strings.NewReader(dump))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || !strings.Contains(line, "\t[") || !strings.Contains(line, `"`) {
			continue
		}
		if !strings.Contains(line, " Active/") {
			bad = append(bad, strings.TrimSpace(line))
		}
	}
	return bad
}

// SockName is the IBSIM_SOCKNAME of this fabric.
func (f *Fabric) SockName() string { return f.sockName }

// Dir is the fabric's temp dir (logs, OpenSM cache); removed by Stop.
func (f *Fabric) Dir() string { return f.dir }

// Pids returns the process ids of ibsim and OpenSM (0 when not running).
func (f *Fabric) Pids() (ibsim, opensm int) {
	if f.ibsim != nil {
		ibsim = f.ibsim.pid()
	}
	if f.opensm != nil {
		opensm = f.opensm.pid()
	}
	return ibsim, opensm
}

// Env is the environment of a client of this fabric: os.Environ() without
// any simulator or transport settings of its own, plus IBSIM_SOCKNAME,
// SIM_HOST (when host is not empty) and IBTOOL_TRANSPORT=ibsim, and for a
// remote ibsim IBSIM_SERVER_NAME and IBSIM_SERVER_PORT.
func (f *Fabric) Env(host string) []string {
	env := append(cleanEnviron(), "IBSIM_SOCKNAME="+f.sockName, "IBTOOL_TRANSPORT=ibsim")
	env = append(env, f.serverEnv()...)
	if host != "" {
		env = append(env, "SIM_HOST="+host)
	}
	return env
}

// ServerPort is the UDP base port of a remote ibsim (Options.Remote), 0
// otherwise.
func (f *Fabric) ServerPort() int { return f.port }

// serverEnv points clients at a remote ibsim.
func (f *Fabric) serverEnv() []string {
	if f.port == 0 {
		return nil
	}
	return []string{"IBSIM_SERVER_NAME=127.0.0.1", "IBSIM_SERVER_PORT=" + strconv.Itoa(f.port)}
}

// Console sends one ibsim console command, such as `Error "Hca1"[1] 100`,
// `PerformanceSet "Hca1"[1] PortCounters.SymbolErrorCounter=5` or
// `Unlink "Hca2"[1]`, and returns what ibsim printed in reply. ibsim never
// signals failure other than in words; Console returns an error, with the
// output, when the reply is one of its complaints.
func (f *Fabric) Console(cmd string) (string, error) {
	if f.console == nil {
		return "", errors.New("simfabric: fabric not started")
	}
	out, err := f.console.do(cmd)
	if err != nil {
		return out, fmt.Errorf("simfabric: %w", err)
	}
	if line := consoleComplaint(out); line != "" {
		return out, fmt.Errorf("simfabric: console command %q: %s", cmd, line)
	}
	return out, nil
}

// RestartOpenSM stops OpenSM and starts it again, as an SM failover or an
// upgrade does to a fabric in service, and waits until the new one has
// brought the subnet up (within ctx). The LIDs stay: OpenSM keeps them in
// its cache directory.
func (f *Fabric) RestartOpenSM(ctx context.Context) error {
	if f.opensm == nil {
		return errors.New("simfabric: no OpenSM to restart")
	}
	f.opensm.stop(5 * time.Second)
	// waitReady looks for SUBNET UP in the new OpenSM's log.
	if err := os.Rename(f.path("osm.log"), f.path(fmt.Sprintf("osm.log.%d", time.Now().UnixNano()))); err != nil {
		return fmt.Errorf("simfabric: %w", err)
	}
	if err := f.startOpenSM(); err != nil {
		return err
	}
	return f.waitReady(ctx)
}

// Stop ends OpenSM and ibsim (SIGTERM to their process groups, SIGKILL after
// 2 s), waits for them and removes the temp dir. It may be called any
// number of times and returns the first call's result.
func (f *Fabric) Stop() error {
	f.stopOnce.Do(func() {
		var errs []error
		// OpenSM first, so it does not log ibsim's disappearance as errors.
		for _, c := range []*child{f.opensm, f.ibsim} {
			if c != nil {
				c.stop(2 * time.Second)
			}
		}
		if f.console != nil {
			f.console.in.Close()
		}
		if f.dir != "" {
			if err := os.RemoveAll(f.dir); err != nil {
				errs = append(errs, err)
			}
		}
		if err := errors.Join(errs...); err != nil {
			f.stopErr = fmt.Errorf("simfabric: stop: %w", err)
		}
	})
	return f.stopErr
}

func (f *Fabric) path(name string) string { return filepath.Join(f.dir, name) }

// logTails renders the ends of OpenSM's and ibsim's logs for error messages.
func (f *Fabric) logTails() string {
	var b strings.Builder
	for _, name := range []string{"osm.log", "osm.out", "ibsim.err", "ibsim.out"} {
		data, err := os.ReadFile(f.path(name))
		if err != nil || len(strings.TrimSpace(string(data))) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n--- tail of %s:\n%s", name, tail(string(data), 15))
	}
	return b.String()
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// simEnvVars are stripped from inherited environments: a fabric's clients
// must reach this fabric only, through the transport the caller chose.
var simEnvVars = []string{"IBSIM_SOCKNAME", "IBSIM_SERVER_NAME", "IBSIM_SERVER_PORT", "SIM_HOST", "SIM_SET_ISSM", "IBTOOL_TRANSPORT", "LD_PRELOAD"}

func cleanEnviron() []string {
	var env []string
outer:
	for _, kv := range os.Environ() {
		for _, name := range simEnvVars {
			if strings.HasPrefix(kv, name+"=") {
				continue outer
			}
		}
		env = append(env, kv)
	}
	return env
}

// lookBinary finds a program in PATH or, since /usr/sbin is often not in
// an unprivileged PATH, in the directories Debian installs it to.
func lookBinary(name string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	for _, dir := range []string{"/usr/sbin", "/usr/bin", "/sbin"} {
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w: %s not found in PATH or /usr/sbin (run `make deps`)", ErrNotInstalled, name)
}

// Available reports whether ibsim and umad2sim (and OpenSM, if withSM) are
// installed; the error wraps ErrNotInstalled.
func Available(withSM bool) error {
	var errs []error
	names := []string{"ibsim"}
	if withSM {
		names = append(names, "opensm")
	}
	for _, name := range names {
		if _, err := lookBinary(name); err != nil {
			errs = append(errs, err)
		}
	}
	if _, err := os.Stat(Umad2Sim); err != nil {
		errs = append(errs, fmt.Errorf("%w: %s missing (package ibsim-utils; run `make deps`)", ErrNotInstalled, Umad2Sim))
	}
	return errors.Join(errs...)
}

// child is a started process in its own process group.
type child struct {
	cmd    *exec.Cmd
	exited chan struct{} // closed when Wait returned
	err    error         // Wait's result, valid after exited
}

// startChild starts cmd in a new process group that dies with us, with
// stdout (unless set) and stderr appended to logPath.
func startChild(cmd *exec.Cmd, logPath string) (*child, error) {
	log, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	defer log.Close() // the child has its own copy
	if cmd.Stdout == nil {
		cmd.Stdout = log
	}
	cmd.Stderr = log
	cmd.SysProcAttr = childAttr()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	c := &child{cmd: cmd, exited: make(chan struct{})}
	go func() {
		c.err = cmd.Wait()
		close(c.exited)
	}()
	return c, nil
}

func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

func (c *child) pid() int { return c.cmd.Process.Pid }

// stop sends SIGTERM to the process group, SIGKILL after grace, and waits.
func (c *child) stop(grace time.Duration) {
	select {
	case <-c.exited:
		// Long gone: its pid (and group id) may belong to someone else now.
		return
	default:
	}
	syscall.Kill(-c.pid(), syscall.SIGTERM)
	select {
	case <-c.exited:
		// Just reaped: the group id is still ours; end any members left.
		syscall.Kill(-c.pid(), syscall.SIGKILL)
	case <-time.After(grace):
		syscall.Kill(-c.pid(), syscall.SIGKILL)
		<-c.exited
	}
}
