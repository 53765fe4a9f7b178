package packaging

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ibtool/ibtool/internal/simfabric"
)

// The arm64 cross build runs: under qemu-user it starts, ibtool-verbs
// reports a missing libibverbs in one line (there is no arm64 libibverbs
// here: the dlopen path works), and ibtool queries the simulated fabric byte for byte as the C tool
// does.
func TestArm64BuildRuns(t *testing.T) {
	qemu, err := exec.LookPath("qemu-aarch64")
	if err != nil {
		simfabric.Missing(t, err) // Debian: qemu-user, installed by make deps
	}
	const sysroot = "/usr/aarch64-linux-gnu" // libc6-arm64-cross
	simfabric.RequireTools(t, "smpquery")
	f := simfabric.StartT(t, "tiny.net")
	repo, err := simfabric.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	bin, helper := filepath.Join(dir, "ibtool"), filepath.Join(dir, "ibtool-verbs")
	for _, b := range []string{bin, helper} {
		build := exec.Command("go", "build", "-o", b, "./cmd/"+filepath.Base(b))
		build.Dir = repo
		build.Env = append(build.Environ(), "CGO_ENABLED=0", "GOARCH=arm64")
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("GOARCH=arm64 CGO_ENABLED=0 go build %s: %v\n%s", b, err, out)
		}
	}

	ctx := context.Background()
	run := func(bin string, args ...string) simfabric.Result {
		return f.Run(ctx, "", qemu, append([]string{"-L", sysroot, bin}, args...)...)
	}
	if r := run(bin, "--version"); r.Code != 0 || !strings.HasPrefix(r.Stdout, "ibtool version ") {
		t.Errorf("arm64 ibtool --version: %s", r)
	}
	// The verbs commands run in ibtool-verbs, which ibtool executes (under
	// qemu-user, that exec would leave the emulator): run it directly.
	r := run(helper, "ibv_devices")
	want := "ibv_devices: libibverbs is not available (libibverbs.so.1: cannot open shared object file: No such file or directory); install rdma-core's libibverbs1 and ibverbs-providers\n"
	if r.Code != 255 || r.Stderr != want {
		t.Errorf("arm64 ibtool-verbs ibv_devices without an arm64 libibverbs: %s\nwant exit 255 and %q", r, want)
	}
	c := f.RunC(ctx, "", "smpquery", "nodeinfo", "2")
	ours := run(bin, "smpquery", "nodeinfo", "2")
	if c.Code != 0 || ours.Code != 0 || ours.Stdout != c.Stdout {
		t.Errorf("arm64 ibtool smpquery nodeinfo 2 differs from the C tool:\nC: %s\nibtool: %s", c, ours)
	}
}
