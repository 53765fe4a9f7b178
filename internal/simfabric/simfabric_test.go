package simfabric

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ibtool/ibtool/internal/topogen"
)

func TestTinyFabric(t *testing.T) {
	RequireTools(t, "smpquery", "perfquery")
	f := StartT(t, "tiny.net")
	ctx := context.Background()
	ibsimPid, osmPid := f.Pids()
	if ibsimPid == 0 || osmPid == 0 {
		t.Fatalf("pids: ibsim %d, opensm %d", ibsimPid, osmPid)
	}

	r := f.RunC(ctx, "", "smpquery", "nodeinfo", "2")
	if r.Code != 0 || !strings.Contains(r.Stdout, "NodeType:........................Channel Adapter") {
		t.Fatalf("smpquery nodeinfo 2: want a Channel Adapter, got %s", r)
	}

	// Error injection makes every MAD to Hca1 port 1 fail at once.
	if out, err := f.Console(`Error "Hca1"[1] 100`); err != nil {
		t.Fatalf("Error: %v (%q)", err, out)
	}
	r = f.RunC(ctx, "", "smpquery", "nodeinfo", "2")
	if r.Code == 0 || r.TimedOut {
		t.Fatalf("smpquery nodeinfo 2 with 100%% errors: want a quick failure, got %s", r)
	}
	if _, err := f.Console(`Error "Hca1"[1] 0`); err != nil {
		t.Fatal(err)
	}

	out, err := f.Console(`PerformanceSet "Hca1"[1] PortCounters.SymbolErrorCounter=5`)
	if err != nil || !strings.Contains(out, "SymbolErrorCounter has been set to 5") {
		t.Fatalf("PerformanceSet: %q, %v", out, err)
	}
	r = f.RunC(ctx, "", "perfquery", "2", "1")
	if !strings.Contains(r.Stdout, "SymbolErrorCounter:..............5") {
		t.Errorf("perfquery 2 1 after PerformanceSet: %s", r)
	}

	if out, err := f.Console("Bogus"); err == nil {
		t.Errorf("unknown console command: no error (output %q)", out)
	}
	if _, err := f.Console("# 100% sure"); err == nil {
		t.Error("comment with %: no error")
	}
	if out, err := f.Console(`Unlink "Nope"[1]`); err == nil {
		t.Errorf("Unlink of an unknown node: no error (output %q)", out)
	}

	// The tools disconnected: only OpenSM holds a slot.
	out, err = f.Console("Attached")
	if err != nil || strings.Count(out, "Client ") != 1 || !strings.Contains(out, fmt.Sprintf("pid %d ", osmPid)) {
		t.Errorf("Attached: want only OpenSM (pid %d), got %q, %v", osmPid, out, err)
	}

	dir := f.Dir()
	if err := f.Stop(); err != nil {
		t.Fatal(err)
	}
	for _, pid := range []int{ibsimPid, osmPid} {
		if alive(pid) {
			t.Errorf("pid %d still running after Stop", pid)
		}
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("temp dir %s left after Stop (%v)", dir, err)
	}
	if err := f.Stop(); err != nil {
		t.Errorf("second Stop: %v", err)
	}
	if _, err := f.Console("Attached"); err == nil {
		t.Error("Console after Stop: no error")
	}
}

func TestParallelFabrics(t *testing.T) {
	RequireTools(t, "smpquery")
	names := make(chan string, 2)
	t.Run("group", func(t *testing.T) {
		for i := range 2 {
			t.Run(fmt.Sprint(i), func(t *testing.T) {
				t.Parallel()
				f := StartT(t, "tiny.net")
				names <- f.SockName()
				// Hca3 hangs off Switch2, which keeps the preset LID 7.
				r := f.RunC(context.Background(), "Hca3", "smpquery", "nodeinfo", "7")
				if r.Code != 0 || !strings.Contains(r.Stdout, "NodeType:........................Switch") {
					t.Errorf("smpquery nodeinfo 7 from Hca3: %s", r)
				}
			})
		}
	})
	a, b := <-names, <-names
	if a == b {
		t.Errorf("two fabrics share the socket name %q", a)
	}
}

func TestRunTimeoutKillsGroup(t *testing.T) {
	f := StartOptsT(t, Options{Topology: "tiny.net", RunTimeout: 300 * time.Millisecond})
	t0 := time.Now()
	r := f.Run(context.Background(), "", "sh", "-c", "sleep 30 & echo $!; sleep 30")
	if !r.TimedOut || r.Code != -1 {
		t.Fatalf("want a timeout, got %s", r)
	}
	if d := time.Since(t0); d > 5*time.Second {
		t.Errorf("Run took %v after a 300ms timeout", d)
	}
	var bg int
	if _, err := fmt.Sscan(r.Stdout, &bg); err != nil {
		t.Fatalf("background pid: %v (%q)", err, r.Stdout)
	}
	if alive(bg) {
		t.Errorf("background child %d survived the timeout", bg)
	}
}

func TestRunTimeoutReleasesSlot(t *testing.T) {
	RequireTools(t, "ibping")
	f := StartOptsT(t, Options{Topology: "tiny.net", RunTimeout: 300 * time.Millisecond})
	// An ibping server never exits; killing it would leak its ibsim slot,
	// and ibsim has only 10.
	for range 10 {
		if r := f.RunC(context.Background(), "Hca1", "ibping", "-S"); !r.TimedOut {
			t.Fatalf("ibping -S: want a timeout, got %s", r)
		}
	}
	out, err := f.Console("Attached")
	if err != nil || strings.Count(out, "Client ") != 1 {
		t.Errorf("Attached after killed clients: want only OpenSM, got %q, %v", out, err)
	}
}

// alive reports whether pid runs. A killed child of a killed process is
// reparented and may stay a zombie for a while (or for good, when PID 1
// does not reap), which kill(pid, 0) cannot tell from a live one.
func alive(pid int) bool {
	deadline := time.Now().Add(2 * time.Second)
	for {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return false
		}
		s := string(stat)
		if fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:]); len(fields) > 0 && fields[0] == "Z" {
			return false
		}
		if time.Now().After(deadline) {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestRunMissingBinary(t *testing.T) {
	f := &Fabric{opts: Options{RunTimeout: time.Second}, dir: t.TempDir(), sockName: "unused"}
	r := f.Run(context.Background(), "", "/nonexistent/ibtool")
	if r.Code != -1 || !strings.Contains(r.Stderr, "cannot run") {
		t.Errorf("got %s", r)
	}
	r = f.RunC(context.Background(), "", "no-such-diag-tool")
	if r.Code != -1 || !strings.Contains(r.Stderr, "not found") {
		t.Errorf("got %s", r)
	}
}

func TestEnv(t *testing.T) {
	t.Setenv("SIM_HOST", "Elsewhere")
	t.Setenv("IBSIM_SERVER_NAME", "remote")
	t.Setenv("LD_PRELOAD", "/x.so")
	f := &Fabric{sockName: "ibt1x1"}
	env := f.Env("")
	for _, want := range []string{"IBSIM_SOCKNAME=ibt1x1", "IBTOOL_TRANSPORT=ibsim"} {
		if !slices.Contains(env, want) {
			t.Errorf("Env(\"\") lacks %s", want)
		}
	}
	for _, kv := range env {
		if strings.HasPrefix(kv, "SIM_HOST=") || strings.HasPrefix(kv, "IBSIM_SERVER_NAME=") || strings.HasPrefix(kv, "LD_PRELOAD=") {
			t.Errorf("Env(\"\") inherits %s", kv)
		}
	}
	if !slices.Contains(f.Env("Hca1"), "SIM_HOST=Hca1") {
		t.Error(`Env("Hca1") lacks SIM_HOST=Hca1`)
	}
}

func TestInactivePorts(t *testing.T) {
	dump := "# Net status - Sun Nov 22 01:05:26 2026\n\n" +
		"Switch 8 \"Switch1\"\tnodeguid 200000\tsysimgguid 200000\n" +
		"#\tlinearcap 30720 FDBtop 0 portchange 1\n" +
		"200000\t[0]\t\"Sma Port\"[0]\t lid 0 lmc 0 smlid 0  4x  2.5G Active/LinkUp\n" +
		"200000\t[1]\t\"Hca1\"[1]\t  4x  2.5G Init/LinkUp\n" +
		"200000\t[2]\t\t\t  4x  2.5G Down/Polling\n" +
		"200000\t[4]\t\"Hca2\"[1]\t  4x  2.5G Active/LinkUp\n" +
		"\nCa 2 \"Hca1\"\tnodeguid 100000\tsysimgguid 100000\n" +
		"100001\t[1]\t\"Switch1\"[1]\t lid 0 lmc 0 smlid 0  4x  2.5G Armed/LinkUp\n" +
		"100002\t[2]\t\t\t lid 0 lmc 0 smlid 0  4x  2.5G Down/Polling\n" +
		"#  dumped 2 nodes\n"
	got := inactivePorts(dump)
	if len(got) != 2 || !strings.Contains(got[0], "Init/") || !strings.Contains(got[1], "Armed/") {
		t.Errorf("inactivePorts = %q", got)
	}
}

func TestConsoleHelpers(t *testing.T) {
	if got := trimPrompts("sim> Client 0: pid 1\nsim> "); got != "Client 0: pid 1\n" {
		t.Errorf("trimPrompts = %q", got)
	}
	for out, want := range map[string]bool{
		"": false,
		"Hca1[1] PortCounters.SymbolErrorCounter has been set to 5\n": false,
		"# Net status - x\n#  dumped 5 nodes\n":                       false,
		"# nodeid \"Nope\" (Nope) not found\n":                        true,
		"command 'Bogus' unknown - skipped\n":                         true,
		"to/from lid unconfigured. Usage: route from-lid to-lid\n":    true,
		"disconnect client: bad clientid 7\n":                         true,
	} {
		if got := consoleComplaint(out) != ""; got != want {
			t.Errorf("consoleComplaint(%q) = %v, want %v", out, got, want)
		}
	}
}

func TestTopologyPath(t *testing.T) {
	if p := TopologyPath("tiny.net"); !strings.HasSuffix(p, "/testdata/topologies/tiny.net") {
		t.Errorf("TopologyPath(tiny.net) = %q", p)
	}
	if p := TopologyPath("fattree-50.net"); !strings.HasSuffix(p, "/testdata/topologies/fattree-50.net") {
		t.Errorf("TopologyPath(fattree-50.net) = %q", p)
	}
	// ibsim's examples, as its Debian package installs them.
	if _, err := os.Stat(IbsimExamples); err != nil {
		Missing(t, err)
	} else if p := TopologyPath("ibsim-2sw2path4hca2port.net"); p != IbsimExamples+"/net.2sw2path4hca2port" {
		t.Errorf("TopologyPath(ibsim-2sw2path4hca2port.net) = %q", p)
	}
	defer func() {
		msg := fmt.Sprint(recover())
		if !strings.Contains(msg, `"no-such.net" not found`) || !strings.Contains(msg, "testdata/topologies") || !strings.Contains(msg, "ibsim-net.net") {
			t.Errorf("missing topology: panic %q", msg)
		}
	}()
	TopologyPath("no-such.net")
}

// TestGeneratedTopologies: every generated fabric in testdata/topologies
// is what its topogen preset makes today (`go generate
// ./internal/simfabric` rewrites them), so the tests run on the fabrics
// the generator documents.
func TestGeneratedTopologies(t *testing.T) {
	root, err := ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(root, "testdata", "topologies", "*.net"))
	if err != nil {
		t.Fatal(err)
	}
	generated := 0
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		first, rest, _ := strings.Cut(string(data), "\n")
		if first != topogen.GeneratedMarker {
			continue
		}
		generated++
		title, _, _ := strings.Cut(rest, "\n")
		preset, _, ok := strings.Cut(strings.TrimPrefix(title, "# "), ":")
		if !ok {
			t.Errorf("%s: the title %q names no preset", file, title)
			continue
		}
		fab, err := topogen.Preset(preset)
		if err != nil {
			t.Errorf("%s: %v", file, err)
			continue
		}
		if want := fab.Bytes(); !bytes.Equal(data, want) {
			t.Errorf("%s is not what preset %s makes (go generate ./internal/simfabric):\n%s", file, preset,
				UnifiedDiff(filepath.Base(file), "generated", string(data), string(want)))
		}
	}
	if generated < 3 {
		t.Errorf("%d generated topologies in testdata, want fattree-50, fattree-200 and torus-3x3", generated)
	}
}

func TestRemoveStaleDirs(t *testing.T) {
	stale, err := os.MkdirTemp("", "simfabric-ibt999999999x1-")
	if err != nil {
		t.Fatal(err)
	}
	ours, err := os.MkdirTemp("", fmt.Sprintf("simfabric-ibt%dx999-", os.Getpid()))
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(ours)
	removeStaleDirs()
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		os.RemoveAll(stale)
		t.Errorf("stale dir %s not removed", stale)
	}
	if _, err := os.Stat(ours); err != nil {
		t.Errorf("live process's dir removed: %v", err)
	}
}

func TestStartBadTopology(t *testing.T) {
	RequireSim(t, true)
	bad := t.TempDir() + "/bad.net"
	if err := os.WriteFile(bad, []byte("Switch 2 \"S\"\n[1] \"Nope\"[1]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Start(context.Background(), Options{Topology: bad})
	if err == nil {
		f.Stop()
		t.Fatal("no error")
	}
	// The error carries ibsim's own complaint.
	if !strings.Contains(err.Error(), `can't find remote node "Nope"`) {
		t.Errorf("error lacks ibsim's reason: %v", err)
	}
}

// A restarted OpenSM brings the subnet up again with the same LIDs, in
// the one ibsim slot the old one gave back.
func TestRestartOpenSM(t *testing.T) {
	RequireTools(t, "smpquery")
	f := StartT(t, "tiny.net")
	_, before := f.Pids()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := f.RestartOpenSM(ctx); err != nil {
		t.Fatal(err)
	}
	_, after := f.Pids()
	if after == before || after == 0 {
		t.Fatalf("OpenSM pid %d before, %d after", before, after)
	}
	if out, err := f.Console("Attached"); err != nil || strings.Count(out, "Client ") != 1 || !strings.Contains(out, fmt.Sprintf("pid %d ", after)) {
		t.Errorf("Attached after the restart: %q, %v; want the new OpenSM alone", out, err)
	}
	if r := f.RunC(ctx, "", "smpquery", "nodeinfo", "2"); r.Code != 0 || !strings.Contains(r.Stdout, "Channel Adapter") {
		t.Errorf("LID 2 after the restart: %s", r)
	}
}
