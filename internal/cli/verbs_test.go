package cli

import (
	"bytes"
	"strings"
	"testing"

	verbscmd "github.com/ibtool/ibtool/internal/cli/cmd/verbs"
	"github.com/ibtool/ibtool/internal/cli/cmdutil"
	"github.com/ibtool/ibtool/internal/verbs"
)

// testdata/verbs_rxe holds, from one run of the VM test (make test-vm with
// IBTOOL_VM_CAPTURE), rdma-core 44's ibv_devices and ibv_devinfo output for
// two rxe devices and ibtool's JSON for the same devices. Rendering the JSON
// must give rdma-core's text byte for byte.

func runVerbsCmd(args ...string) cmdResult {
	var out, errOut bytes.Buffer
	env := &cmdutil.Env{IO: cmdutil.IO{In: strings.NewReader(""), Out: &out, Err: &errOut}}
	code := run(append([]string{"ibtool"}, args...), env)
	return cmdResult{out.String(), errOut.String(), code}
}

func TestVerbsUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args string
		want string
	}{
		{"ibv_devinfo -i 0", "invalid port 0"},
		{"ibv_devinfo -i -3", "invalid port -3"},
		{"ibv_devinfo --bogus", "unknown flag: --bogus"},
		{"ibv_devinfo extra", `unexpected argument "extra"`},
		{"ibv_devices extra", `unexpected argument "extra"`},
		{"rdma_bw -s 0", "invalid size 0"},
		{"rdma_bw -n 0 host", "invalid number of iterations 0"},
		{"rdma_bw -t 0", "invalid tx depth 0"},
		{"rdma_bw -e 0", "invalid number of SGEs 0"},
		{"rdma_bw -s 2 -e 3 host", "invalid number of SGEs 3"},
		{"rdma_bw -p 0", "invalid TCP port 0"},
		{"rdma_bw -x 256", "invalid GID index 256"},
		{"rdma_bw -i 0", "invalid IB port 0"},
		{"rdma_bw a b", "expected at most one argument"},
		{"rdma_bw -s x", `invalid argument "x"`},
	} {
		r := runVerbsCmd(strings.Fields(tc.args)...)
		if r.code != cmdutil.ExitUsage || !strings.Contains(r.stderr, tc.want) || r.stdout != "" {
			t.Errorf("%s: exit %d, stderr %q; want exit 2 and %q", tc.args, r.code, r.stderr, tc.want)
		}
	}
}

// On a host with libibverbs but no RDMA devices, ibv_devices lists nothing
// and the other commands say there is no device.
func TestVerbsNoDevices(t *testing.T) {
	if err := verbs.Load(); err != nil {
		t.Skipf("libibverbs not installed: %v", err)
	}
	if devs, _ := verbs.Devices(); len(devs) > 0 {
		t.Skip("this host has RDMA devices")
	}
	r := runVerbsCmd("ibv_devices")
	if r.code != 0 || r.stdout != verbscmd.FormatIbvDevices(nil) || r.stderr != "" {
		t.Errorf("ibv_devices: %+v", r)
	}
	r = runVerbsCmd("ibv_devices", "--json")
	if r.code != 0 || strings.TrimSpace(r.stdout) != "[]" {
		t.Errorf("ibv_devices --json: %+v", r)
	}
	r = runVerbsCmd("ibv_devinfo", "-l")
	if r.code != 0 || r.stdout != "0 HCAs found:\n\n" {
		t.Errorf("ibv_devinfo -l: %+v", r)
	}
	for _, tc := range []struct{ args, want string }{
		{"ibv_devinfo", "ibv_devinfo: No IB devices found\n"},
		{"ibv_devinfo -d mlx5_0", "ibv_devinfo: IB device 'mlx5_0' wasn't found\n"},
		{"rdma_bw -d mlx5_0 127.0.0.1", "rdma_bw: no such RDMA device: \"mlx5_0\"\n"},
	} {
		r := runVerbsCmd(strings.Fields(tc.args)...)
		if r.code != cmdutil.ExitFailure || r.stderr != tc.want || r.stdout != "" {
			t.Errorf("%s: exit %d, stderr %q, stdout %q; want %q", tc.args, r.code, r.stderr, r.stdout, tc.want)
		}
	}
}

// Without libibverbs, verbs commands fail with one clear line and the rest
// of ibtool works.
func TestVerbsWithoutLibibverbs(t *testing.T) {
	noLib := []string{verbs.LibraryEnv + "=/nonexistent/libibverbs.so.1"}
	for _, args := range [][]string{
		{"ibv_devices"}, {"ibv_devices", "--json"}, {"ibv_devinfo"}, {"ibv_devinfo", "-l"}, {"ibv_devinfo", "-v", "-d", "rxe0"},
		{"rdma_bw"}, {"rdma_bw", "-s", "4096", "10.0.0.1"},
	} {
		r := runHelper(t, noLib, args...)
		want := args[0] + ": libibverbs is not available (/nonexistent/libibverbs.so.1: cannot open shared object file: No such file or directory); install rdma-core's libibverbs1 and ibverbs-providers\n"
		if r.code != cmdutil.ExitFailure || r.stderr != want || r.stdout != "" {
			t.Errorf("%v: exit %d, stderr %q, stdout %q; want exit 255 and %q", args, r.code, r.stderr, r.stdout, want)
		}
	}
	for _, args := range [][]string{{"--version"}, {"help"}, {"smpdump", "--help"}, {"rdma_bw", "--help"}} {
		if r := runHelper(t, noLib, args...); r.code != 0 {
			t.Errorf("%v without libibverbs: exit %d, stderr %q", args, r.code, r.stderr)
		}
	}
	// A usage error is still reported as one before the library matters.
	if r := runHelper(t, noLib, "ibv_devinfo", "-i", "0"); r.code != cmdutil.ExitUsage {
		t.Errorf("usage error without libibverbs: exit %d", r.code)
	}
}
