package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ibtool/ibtool/internal/cache"
	"github.com/ibtool/ibtool/internal/cli/cmd/ibcacheedit"
	"github.com/ibtool/ibtool/internal/cli/cmdutil"
	"github.com/ibtool/ibtool/internal/simfabric"
)

// simCache writes a cache of a simulated fabric with infiniband-diags'
// ibnetdiscover and returns its path.
func simCache(t *testing.T, f *simfabric.Fabric, dir string) string {
	t.Helper()
	simfabric.RequireTools(t, "ibnetdiscover", "ibcacheedit")
	x := filepath.Join(dir, "orig.cache")
	if r := f.RunC(context.Background(), "", "ibnetdiscover", "--cache", x); r.Code != 0 {
		t.Fatalf("ibnetdiscover --cache: %v", r)
	}
	return x
}

// runIbtool runs ibtool in-process with no fabric (ibcacheedit needs none);
// argv0 "ibcacheedit" runs it as through a symlink.
func runIbtool(argv0 string, args ...string) simfabric.Result {
	var out, errOut bytes.Buffer
	env := &cmdutil.Env{IO: cmdutil.IO{In: strings.NewReader(""), Out: &out, Err: &errOut}}
	code := run(append([]string{argv0}, args...), env)
	return simfabric.Result{Stdout: out.String(), Stderr: errOut.String(), Code: code}
}

// TestIbcacheeditMatchesInfinibandDiags runs ibtool's and infiniband-diags'
// ibcacheedit with the same edits on a cache from the simulator: the new
// caches must be byte-identical, failures must fail alike.
func TestIbcacheeditMatchesInfinibandDiags(t *testing.T) {
	f := sharedFabric(t, "tiny.net")
	dir := t.TempDir()
	x := simCache(t, f, dir)
	orig, _ := os.ReadFile(x)
	corrupt := filepath.Join(dir, "corrupt.cache")
	os.WriteFile(corrupt, orig[:len(orig)-1], 0o644)

	// tiny.net: Switch1 0x200000 (where discovery starts), Switch2
	// 0x200001, CAs 0x100000 (ports 0x100001, 0x100002), 0x100003, 0x100006.
	cases := []struct {
		name string
		args []string
		in   string // default x
		fail string // expected failure message ("" = success)
	}{
		{"switch", []string{"--switchguid", "0x200001:0x2c9000000abcd"}, "", ""},
		{"from switch", []string{"--switchguid", "0x200000:0x123456"}, "", ""},
		{"ca", []string{"--caguid", "0x100000:0x100abc"}, "", ""},
		{"sysimg", []string{"--sysimgguid", "0x100003:0x999"}, "", ""},
		{"ca port", []string{"--portguid", "0x100000:0x100001:0x100055"}, "", ""},
		{"switch port", []string{"--portguid", "0x200001:0x200001:0x777"}, "", ""},
		{"all", []string{"--portguid", "0x100abc:0x100001:0x100055", "--switchguid", "0x200000:0x20", "--caguid", "0x100000:0x100abc",
			"--sysimgguid", "0x200001:0x21"}, "", ""},
		{"decimal", []string{"--caguid", "1048582:42"}, "", ""},
		{"switch not found", []string{"--switchguid", "0x100000:0x2"}, "", "switchguid = 100000 not found"},
		{"ca not found", []string{"--caguid", "0x200000:0x2"}, "", "caguid = 200000 not found"},
		{"sysimg not found", []string{"--sysimgguid", "0x5:0x2"}, "", "sysimgguid = 5 not found"},
		{"node not found", []string{"--portguid", "0x5:0x100001:0x2"}, "", "nodeguid = 5 not found"},
		{"port not found", []string{"--portguid", "0x100000:0x100004:0x2"}, "", "portguid = 100004 not found"},
		{"switch port not found", []string{"--portguid", "0x200001:0x5:0x2"}, "", "portguid = 5 not found"},
		{"no such file", nil, filepath.Join(dir, "none"), "loading original cached fabric failed"},
		{"corrupt file", nil, corrupt, "loading original cached fabric failed"},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := x
			if c.in != "" {
				in = c.in
			}
			cOut := filepath.Join(dir, "c"+string(rune('a'+i))+".cache")
			ours := filepath.Join(dir, "o"+string(rune('a'+i))+".cache")
			cr := f.RunC(context.Background(), "", "ibcacheedit", append(append([]string{}, c.args...), in, cOut)...)
			or := runIbtool("ibtool", append(append([]string{"ibcacheedit"}, c.args...), in, ours)...)
			if cr.Code != or.Code {
				t.Fatalf("exit %d, C tool %d\nC: %v\nours: %v", or.Code, cr.Code, cr, or)
			}
			if c.fail != "" {
				// The C tool prints "<argv0>: iberror: failed: <msg>" on stdout.
				if !strings.Contains(cr.Stdout, "iberror: failed: "+c.fail+"\n") {
					t.Errorf("C tool: %v", cr)
				}
				if !strings.HasPrefix(or.Stderr, "ibcacheedit: "+c.fail) || or.Stdout != "" || strings.Count(or.Stderr, "\n") != 1 {
					t.Errorf("ours: %v", or)
				}
				for _, p := range []string{cOut, ours} {
					if _, err := os.Stat(p); err == nil {
						t.Errorf("%s written after a failure", p)
					}
				}
				return
			}
			want, err := os.ReadFile(cOut)
			if err != nil {
				t.Fatalf("C tool wrote nothing: %v", cr)
			}
			got, err := os.ReadFile(ours)
			if err != nil {
				t.Fatalf("ours wrote nothing: %v", or)
			}
			if bytes.Equal(want, orig) {
				t.Error("the C tool changed nothing")
			}
			if !bytes.Equal(got, want) {
				t.Errorf("caches differ from the C tool's (%d and %d bytes)", len(got), len(want))
				cl := f.RunC(context.Background(), "", "ibnetdiscover", "--load-cache", cOut)
				ol := f.RunC(context.Background(), "", "ibnetdiscover", "--load-cache", ours)
				simfabric.Compare(t, "ibnetdiscover --load-cache", cl, ol, simfabric.Timestamps, simfabric.DropSimNoise)
			}
			if or.Stdout != "" || or.Stderr != "" {
				t.Errorf("output on success: %v", or)
			}
		})
	}
}

func TestIbcacheeditUsage(t *testing.T) {
	f := sharedFabric(t, "tiny.net")
	dir := t.TempDir()
	x := simCache(t, f, dir)
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{nil, 255, "ibcacheedit: original cache file not specified\n"},
		{[]string{x}, 255, "ibcacheedit: new cache file not specified\n"},
		{[]string{"--switchguid", "0x200000", x, x + ".new"}, 2, "ibcacheedit: invalid input '0x200000': --switchguid takes BEFOREGUID:AFTERGUID\n"},
		{[]string{"--portguid", "0x1:0x2", x, x + ".new"}, 2, "ibcacheedit: invalid input '0x1:0x2': --portguid takes NODEGUID:BEFOREGUID:AFTERGUID\n"},
		{[]string{"--caguid", "0x1:zz", x, x + ".new"}, 2, "ibcacheedit: invalid input '0x1:zz': \"zz\" is not a number\n"},
		{[]string{x, x + ".new", "extra"}, 2, "ibcacheedit: expected <orig.cache> <new.cache>, got 3 arguments\n"},
	} {
		r := runIbtool("ibtool", append([]string{"ibcacheedit"}, c.args...)...)
		if r.Code != c.code || !strings.HasPrefix(r.Stderr, c.msg) {
			t.Errorf("%v: %v", c.args, r)
		}
	}
	// The C tool's exit codes for the same mistakes.
	for _, c := range []struct {
		args []string
		code int
	}{
		{nil, 255},
		{[]string{x}, 255},
		{[]string{"--switchguid", "0x200000", x, x + ".new"}, 2},
	} {
		if r := f.RunC(context.Background(), "", "ibcacheedit", c.args...); r.Code != c.code {
			t.Errorf("C ibcacheedit %v: %v", c.args, r)
		}
	}
	// Through a symlink the failure is the C tool's IBEXIT line, on stdout.
	r := runIbtool("ibcacheedit", "--caguid", "0x7:0x8", x, filepath.Join(dir, "n.cache"))
	if r.Code != 255 || r.Stdout != "ibcacheedit: iberror: failed: caguid = 7 not found\n" || r.Stderr != "" {
		t.Errorf("compat: %v", r)
	}
}

func TestIbcacheeditJSON(t *testing.T) {
	f := sharedFabric(t, "tiny.net")
	dir := t.TempDir()
	x := simCache(t, f, dir)
	out := filepath.Join(dir, "new.cache")
	r := runIbtool("ibtool", "ibcacheedit", "--json", "--switchguid", "0x200000:0xabcdef", "--portguid", "0x100000:0x100001:0x100099", x, out)
	if r.Code != 0 {
		t.Fatal(r)
	}
	var res ibcacheedit.CacheEditResult
	if err := json.Unmarshal([]byte(r.Stdout), &res); err != nil {
		t.Fatal(err, r.Stdout)
	}
	want := ibcacheedit.CacheEditResult{Input: x, Output: out, Edits: []ibcacheedit.CacheEdit{
		{Option: "switchguid", Before: "0x0000000000200000", After: "0x0000000000abcdef", Changed: 1,
			Nodes: []ibcacheedit.EditedNode{{NodeGUID: "0x0000000000abcdef", NodeType: "switch", Description: "Switch1"}}},
		{Option: "portguid", NodeGUID: "0x0000000000100000", Before: "0x0000000000100001", After: "0x0000000000100099", Changed: 1,
			Nodes: []ibcacheedit.EditedNode{{NodeGUID: "0x0000000000100000", NodeType: "ca", Description: "hca one", Port: 1}}},
	}}
	if g, w := mustJSON(t, res), mustJSON(t, want); g != w {
		t.Errorf("got  %s\nwant %s", g, w)
	}
	// The new cache has the edits, and the fabric's index follows them.
	fab, err := cache.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	if n := fab.Node(0xabcdef); n == nil || n != fab.From || n.Ports[8].GUID != 0xabcdef || fab.Node(0x200000) != nil {
		t.Errorf("switch GUID not changed: %+v", n)
	}
	if p := fab.Node(0x100000).Ports[1]; p == nil || p.GUID != 0x100099 || p.Remote == nil || p.Remote.Remote != p {
		t.Errorf("port GUID not changed: %+v", p)
	}
}

func mustJSON(t *testing.T, v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The companion file (DR paths) follows the edited GUIDs.
func TestIbcacheeditKeepsCompanion(t *testing.T) {
	f := sharedFabric(t, "tiny.net")
	dir := t.TempDir()
	x := simCache(t, f, dir)
	fab, err := cache.Read(x)
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range fab.Nodes {
		n.DRPath = []byte{0, byte(i)}
	}
	withPaths := filepath.Join(dir, "paths.cache")
	if err := cache.Write(withPaths, fab); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "new.cache")
	if r := runIbtool("ibtool", "ibcacheedit", "--caguid", "0x100003:0x42", withPaths, out); r.Code != 0 {
		t.Fatal(r)
	}
	got, err := cache.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	want := fab.Node(0x100003).DRPath
	if n := got.Node(0x42); n == nil || !bytes.Equal(n.DRPath, want) {
		t.Errorf("DR path of the renamed node: %v, want %v", n, want)
	}
}
