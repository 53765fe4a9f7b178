package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ibtool/ibtool/internal/cli/cmdutil"
)

// writableSysfs is a copy of ibstat's recorded sysfs that a test may
// write: three CAs, mlx4_0, mlx5_0 and mlx5_1.
func writableSysfs(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	if err := os.CopyFS(root, os.DirFS(fakeSysfs(t))); err != nil {
		t.Fatal(err)
	}
	for _, ca := range []string{"mlx4_0", "mlx5_0", "mlx5_1"} {
		if err := os.Chmod(filepath.Join(root, "class/infiniband", ca, "node_desc"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func nodeDescFile(t *testing.T, root, ca string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "class/infiniband", ca, "node_desc"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Golden texts written from python-rdma's set_nodedesc ("<ca>: <desc>")
// and our change report.
func TestSetNodedescSysfs(t *testing.T) {
	for _, tc := range []struct {
		args    string
		want    string
		written map[string]string // CA -> node_desc afterwards, for those changed
	}{
		{"", "mlx4_0: node7 HCA-1\nmlx5_0: node7 mlx5_0\nmlx5_1: node7 mlx5_1\n", nil},
		{"-C mlx5_0", "mlx5_0: node7 mlx5_0\n", nil},
		{"-P mlx5_1/1", "mlx5_1: node7 mlx5_1\n", nil},
		{"-v newname", "mlx4_0: node7 HCA-1\nmlx5_0: node7 mlx5_0\nmlx5_1: node7 mlx5_1\n", nil}, // -v shows, sets nothing
		{"-C mlx4_0 newname", "mlx4_0: \"node7 HCA-1\" -> \"newname\"\n", map[string]string{"mlx4_0": "newname"}},
		{"newname", "mlx4_0: \"node7 HCA-1\" -> \"newname\"\nmlx5_0: \"node7 mlx5_0\" -> \"newname\"\nmlx5_1: \"node7 mlx5_1\" -> \"newname\"\n",
			map[string]string{"mlx4_0": "newname", "mlx5_0": "newname", "mlx5_1": "newname"}},
	} {
		t.Run(tc.args, func(t *testing.T) {
			root := writableSysfs(t)
			r := runKernel(t, root, append([]string{"ibtool", "set_nodedesc"}, strings.Fields(tc.args)...)...)
			if r.code != 0 || r.stdout != tc.want {
				t.Fatalf("exit %d, stdout %q, stderr %q; want %q", r.code, r.stdout, r.stderr, tc.want)
			}
			for _, ca := range []string{"mlx4_0", "mlx5_0", "mlx5_1"} {
				got := nodeDescFile(t, root, ca)
				if want, ok := tc.written[ca]; ok && got != want || !ok && !strings.HasPrefix(got, "node7") {
					t.Errorf("%s: node_desc %q", ca, got)
				}
			}
		})
	}
}

// A name too long, or a CA that is not there: a usage error and nothing
// written.
func TestSetNodedescBadInput(t *testing.T) {
	for _, tc := range []struct{ args, msg string }{
		{strings.Repeat("x", 65), "the name is 65 bytes: a node description has at most 64"},
		{"-C mlx9_9 x", "mlx9_9"},
		{"a b", "expected at most one <name>"},
	} {
		root := writableSysfs(t)
		r := runKernel(t, root, append([]string{"ibtool", "set_nodedesc"}, strings.Fields(tc.args)...)...)
		if r.code != cmdutil.ExitUsage || !strings.Contains(r.stderr, tc.msg) || r.stdout != "" {
			t.Errorf("%s: exit %d, stderr %q, stdout %q; want exit 2 and %q", tc.args, r.code, r.stderr, r.stdout, tc.msg)
		}
		if got := nodeDescFile(t, root, "mlx4_0"); got != "node7 HCA-1\n" {
			t.Errorf("%s: node_desc written: %q", tc.args, got)
		}
	}
}

// Under ibsim there is no sysfs: the description is read, and a set
// sent, as SMPs to the local node. ibsim's SMA refuses the SubnSet
// (NodeDescription is read-only in IBA 14.2.5.2): set_nodedesc fails
// saying so, and the C smpquery reads the description unchanged.
func TestSetNodedescSimulator(t *testing.T) {
	f := sharedFabric(t, "tiny.net")
	r := runSim(f, "Hca1", "set_nodedesc")
	if r.Code != 0 || r.Stdout != "ibsim0: hca one\n" {
		t.Fatalf("show: exit %d, stdout %q, stderr %q", r.Code, r.Stdout, r.Stderr)
	}
	r = runSim(f, "Hca1", "set_nodedesc", "-v", "renamed")
	if r.Code != 0 || r.Stdout != "ibsim0: hca one\n" {
		t.Fatalf("-v: exit %d, stdout %q, stderr %q", r.Code, r.Stdout, r.Stderr)
	}
	r = runSim(f, "Hca1", "set_nodedesc", "renamed")
	if r.Code != cmdutil.ExitFailure || r.Stdout != "" ||
		!strings.Contains(r.Stderr, "ibsim0: setting the node description: SubnSet(NodeDescription)") ||
		!strings.Contains(r.Stderr, "(method not supported); this SMA does not allow it") {
		t.Fatalf("set: exit %d, stdout %q, stderr %q", r.Code, r.Stdout, r.Stderr)
	}
	c := f.RunC(context.Background(), "Hca1", "smpquery", "-D", "nodedesc", "0")
	if c.Code != 0 || !strings.HasSuffix(c.Stdout, "hca one\n") {
		t.Fatalf("smpquery reads back %q (exit %d)", c.Stdout, c.Code)
	}
}
