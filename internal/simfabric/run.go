package simfabric

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Result is what one run of a tool produced.
type Result struct {
	Stdout, Stderr string
	// Code is the exit code; -1 when the process was killed by a signal or
	// could not be started (Stderr then says why).
	Code int
	// TimedOut is set when the run was killed at its timeout or because ctx
	// ended.
	TimedOut bool
}

func (r Result) String() string {
	s := fmt.Sprintf("exit %d", r.Code)
	if r.TimedOut {
		s += " (timed out)"
	}
	return s + "\nstdout:\n" + r.Stdout + "stderr:\n" + r.Stderr
}

// RunC runs an infiniband-diags C tool (found in PATH or /usr/sbin) against
// the fabric through umad2sim, attached to host (SIM_HOST; "" is the first
// node). See Run for the rest.
func (f *Fabric) RunC(ctx context.Context, host string, tool string, args ...string) Result {
	bin, err := lookBinary(tool)
	if err != nil {
		return Result{Stderr: "simfabric: " + err.Error() + "\n", Code: -1}
	}
	return f.run(ctx, append(f.Env(host), "LD_PRELOAD="+Umad2Sim), bin, args)
}

// Run runs binary (ibtool, or a symlink to it named like a C tool) with the
// fabric's environment, attached to host. It runs in a private scratch dir
// with stdin from /dev/null, under a hard timeout (Options.RunTimeout, or
// ctx's deadline if sooner): umad2sim never times out a MAD, so a C tool
// whose request ibsim drops waits forever. On timeout the whole process
// group is killed and the ibsim client slots it held are released.
func (f *Fabric) Run(ctx context.Context, host string, binary string, args ...string) Result {
	if strings.Contains(binary, "/") {
		// The scratch dir becomes the working directory.
		if abs, err := filepath.Abs(binary); err == nil {
			binary = abs
		}
	}
	return f.run(ctx, f.Env(host), binary, args)
}

func (f *Fabric) run(ctx context.Context, env []string, bin string, args []string) Result {
	ctx, cancel := context.WithTimeout(ctx, f.opts.RunTimeout)
	defer cancel()
	// umad2sim writes its fake sysfs to ./sys-<pid>/.
	scratch, err := os.MkdirTemp(f.dir, "run-")
	if err != nil {
		return Result{Stderr: fmt.Sprintf("simfabric: %v\n", err), Code: -1}
	}
	defer os.RemoveAll(scratch)

	var stdout, stderr bytes.Buffer
	var group []int // set when the context ended: the process group's members, just before the kill
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir, cmd.Env = scratch, env
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.SysProcAttr = childAttr()
	cmd.Cancel = func() error {
		pgid := cmd.Process.Pid
		group = groupMembers(pgid)
		return syscall.Kill(-pgid, syscall.SIGKILL)
	}
	// A killed tool's children might hold the output pipes open.
	cmd.WaitDelay = 2 * time.Second
	err = cmd.Run()

	res := Result{Stdout: stdout.String(), Stderr: stderr.String(), Code: -1}
	if cmd.ProcessState != nil {
		res.Code = cmd.ProcessState.ExitCode()
	}
	switch {
	case group != nil:
		res.TimedOut = true
		res.Stderr += fmt.Sprintf("simfabric: %s killed: %v\n", filepath.Base(bin), ctx.Err())
		f.releaseSlots(group)
	case err != nil && cmd.ProcessState == nil:
		res.Stderr += fmt.Sprintf("simfabric: cannot run %s: %v\n", bin, err)
	}
	return res
}

// groupMembers lists the processes of process group pgid (from /proc).
func groupMembers(pgid int) []int {
	pids := []int{pgid}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == pgid {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// Fields after the parenthesised command: state ppid pgrp ...
		s := string(stat)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(fields) > 2 && fields[2] == strconv.Itoa(pgid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

var attachedRE = regexp.MustCompile(`(?m)^Client (\d+): pid (\d+) `)

// releaseSlots disconnects the ibsim clients of killed processes: ibsim
// would otherwise keep their slots (it has 10) until it next writes to them.
func (f *Fabric) releaseSlots(pids []int) {
	if len(pids) == 0 || f.console == nil {
		return
	}
	out, err := f.console.do("Attached")
	if err != nil {
		return
	}
	for _, m := range attachedRE.FindAllStringSubmatch(out, -1) {
		pid, _ := strconv.Atoi(m[2])
		for _, p := range pids {
			if p == pid {
				f.console.do("X " + m[1])
			}
		}
	}
}
