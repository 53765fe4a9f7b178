package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ibtool/ibtool/internal/cli/cmd/ibsysstat"
	"github.com/ibtool/ibtool/internal/cli/cmdutil"
	"github.com/ibtool/ibtool/internal/simfabric"
	"github.com/ibtool/ibtool/internal/vendormad"
)

func TestIbsysstatMatchesInfinibandDiags(t *testing.T) {
	simfabric.RequireTools(t, "ibsysstat")
	f := serverFabric(t)
	lid := lidOf(t, f, hca2GUID)
	clients := []string{
		lid, // ping
		lid + " ping",
		lid + " host",
		lid + " cpu",
		"-G " + hca2GUID + " host",
		"-L " + lid + " host extra", // more arguments are ignored
	}
	usage := "-t 100 " + lid + " bogus" // the C tool fails too
	check := func(t *testing.T) {
		t.Helper()
		r := runLinked(f, "Hca3", "ibsysstat", lid, "host")
		if r.Stdout != vendormad.HostAndDomain(1<<16)+"\n" || r.Code != 0 {
			t.Errorf("host: %v", r)
		}
		r = runLinked(f, "Hca3", "ibsysstat", lid, "cpu")
		if !strings.HasPrefix(r.Stdout, "cpu 0: model ") || r.Code != 0 {
			t.Errorf("cpu: %v", r)
		}
	}

	t.Run("ibtool server", func(t *testing.T) {
		stop := startGoServer(t, f, "Hca2", ibsysstat.NewCmd)
		for _, args := range clients {
			conformLinked(t, f, "Hca1", "ibsysstat", nil, strings.Fields(args)...)
		}
		conformLinked(simfabric.ExpectFailure(t), f, "Hca1", "ibsysstat", nil, strings.Fields(usage)...)
		check(t)
		// python-rdma's cpi: the server's ClassPortInfo.
		r := runSim(f, "Hca1", "ibsysstat", lid, "cpi")
		if !strings.HasPrefix(r.Stdout, "# ClassPortInfo: Lid "+lid+"\nBaseVersion:.....................1\nClassVersion:....................1\n") || r.Code != 0 {
			t.Errorf("cpi: %v", r)
		}
		// Another OUI: no answer.
		r = runLinked(f, "Hca1", "ibsysstat", "-o", "5", "-t", "100", lid, "host")
		if r.Stdout != "ibsysstat: iberror: failed: ibsystat to Lid "+lid+": Connection timed out\n" || r.Code != cmdutil.ExitFailure {
			t.Errorf("-o 5: %v", r)
		}
		if out, errOut := stop(); out != "" || errOut != "" {
			t.Errorf("the server printed %q %q", out, errOut)
		}
	})

	t.Run("C server", func(t *testing.T) {
		stop := startCServer(t, f, "Hca2", "ibsysstat")
		defer stop()
		for _, args := range clients {
			conformLinked(t, f, "Hca1", "ibsysstat", nil, strings.Fields(args)...)
		}
		conformLinked(simfabric.ExpectFailure(t), f, "Hca1", "ibsysstat", nil, strings.Fields(usage)...)
		check(t)
	})

	t.Run("no server", func(t *testing.T) {
		for _, args := range []string{lid, lid + " host", "99 cpu"} {
			conformLinked(simfabric.ExpectFailure(t), f, "Hca1", "ibsysstat", nil, strings.Fields(args)...)
		}
	})
}

func TestIbsysstatFailures(t *testing.T) {
	f := serverFabric(t)
	lid := lidOf(t, f, hca2GUID)
	r := runSim(f, "Hca2", "ibsysstat", "-S")
	if r.Code != cmdutil.ExitFailure || !strings.Contains(r.Stderr, "can't serve class 51 on this port") || !strings.Contains(r.Stderr, "SIM_SET_ISSM=1") {
		t.Errorf("-S without SIM_SET_ISSM: %v", r)
	}
	for _, tc := range []struct {
		args string
		code int
		msg  string
	}{
		{"", cmdutil.ExitUsage, "expected <dest lid|guid> [<op>]"},
		{"3 bogus", cmdutil.ExitUsage, `unknown operation "bogus"`},
		{"-o x 3", cmdutil.ExitUsage, `invalid OUI "x"`},
		{"-t 100 " + lid + " host", cmdutil.ExitFailure, "ibsystat to Lid " + lid + ": Connection timed out: no reply to Class0x33Get(SysStatHostInfo) LID " + lid},
	} {
		r := runSim(f, "Hca1", append([]string{"ibsysstat"}, strings.Fields(tc.args)...)...)
		if r.Code != tc.code || !strings.Contains(r.Stderr, tc.msg) || r.Stdout != "" {
			t.Errorf("%s: got %v; want exit %d and %q", tc.args, r, tc.code, tc.msg)
		}
	}
	simfabric.RequireTools(t, "ibsysstat")
	for _, args := range []string{"", "-G 0x999", "abc", "0 host"} {
		conformLinked(simfabric.ExpectFailure(t), f, "", "ibsysstat", nil, strings.Fields(args)...)
	}
}

func TestIbsysstatJSON(t *testing.T) {
	f := serverFabric(t)
	lid := lidOf(t, f, hca2GUID)
	stop := startGoServer(t, f, "Hca2", ibsysstat.NewCmd)
	defer stop()
	for op, check := range map[string]func(ibsysstat.IbsysstatResult) bool{
		"ping": func(r ibsysstat.IbsysstatResult) bool { return r.OK },
		"host": func(r ibsysstat.IbsysstatResult) bool { return r.Host == vendormad.HostAndDomain(1<<16) },
		"cpu": func(r ibsysstat.IbsysstatResult) bool {
			return len(r.CPUs) > 0 && strings.HasPrefix(r.CPUs[0], "cpu 0: model")
		},
		"cpi": func(r ibsysstat.IbsysstatResult) bool {
			var cpi map[string]any
			return json.Unmarshal(r.ClassPortInfo, &cpi) == nil && cpi["base_version"] == 1.0 && cpi["class_version"] == 1.0
		},
	} {
		r := runSim(f, "Hca1", "ibsysstat", "--json", lid, op)
		var got ibsysstat.IbsysstatResult
		if err := json.Unmarshal([]byte(r.Stdout), &got); err != nil || r.Code != 0 || got.Operation != op || got.Target.Text != "Lid "+lid || !check(got) {
			t.Errorf("%s: %v %v", op, err, r)
		}
	}
}
