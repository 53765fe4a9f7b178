package verbs

import (
	"bufio"
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// mirrors are the Go copies of verbs.h structures (layout.go). whole means
// Go allocates the structure and hands it to libibverbs, so its size must
// match too; the others are only read through pointers libibverbs returned.
var mirrors = []struct {
	c     string
	t     reflect.Type
	whole bool
}{
	{"struct ibv_device", reflect.TypeFor[ibvDevice](), false},
	{"struct ibv_context_ops", reflect.TypeFor[ibvContextOps](), true},
	{"struct ibv_context", reflect.TypeFor[ibvContext](), true},
	{"struct verbs_context", reflect.TypeFor[verbsContext](), true},
	{"struct ibv_device_attr", reflect.TypeFor[ibvDeviceAttr](), true},
	{"struct ibv_device_attr_ex", reflect.TypeFor[ibvDeviceAttrEx](), true},
	{"struct ibv_port_attr", reflect.TypeFor[ibvPortAttr](), true},
	{"struct ibv_gid_entry", reflect.TypeFor[ibvGIDEntry](), true},
	{"struct ibv_mr", reflect.TypeFor[ibvMR](), false},
	{"struct ibv_comp_channel", reflect.TypeFor[ibvCompChannel](), true},
	{"struct ibv_cq", reflect.TypeFor[ibvCQ](), false},
	{"struct ibv_qp", reflect.TypeFor[ibvQP](), false},
	{"struct ibv_qp_cap", reflect.TypeFor[ibvQPCap](), true},
	{"struct ibv_qp_init_attr", reflect.TypeFor[ibvQPInitAttr](), true},
	{"struct ibv_global_route", reflect.TypeFor[ibvGlobalRoute](), true},
	{"struct ibv_ah_attr", reflect.TypeFor[ibvAHAttr](), true},
	{"struct ibv_qp_attr", reflect.TypeFor[ibvQPAttr](), true},
	{"struct ibv_wc", reflect.TypeFor[ibvWC](), true},
	{"struct ibv_sge", reflect.TypeFor[ibvSGE](), true},
	{"struct ibv_send_wr", reflect.TypeFor[ibvSendWR](), true},
	{"struct ibv_recv_wr", reflect.TypeFor[ibvRecvWR](), true},
	{"struct ibv_async_event", reflect.TypeFor[ibvAsyncEvent](), true},
}

// layoutCheck is one C expression and the value the Go side uses for it.
type layoutCheck struct {
	expr string
	goes uint64
}

// goStruct is the layout of a Go mirror: from reflect for the architecture
// the test runs on, from go/types for another one.
type goStruct struct {
	size, align uint64
	fields      []goField
}

type goField struct {
	name, tag string
	off, size uint64
	nested    *goStruct // for a field of struct type
}

func (s *goStruct) field(name string) goField {
	for _, f := range s.fields {
		if f.name == name {
			return f
		}
	}
	panic("no field " + name)
}

func reflectStruct(t reflect.Type) *goStruct {
	s := &goStruct{size: uint64(t.Size()), align: uint64(t.Align())}
	for i := range t.NumField() {
		f := t.Field(i)
		gf := goField{name: f.Name, tag: f.Tag.Get("c"), off: uint64(f.Offset), size: uint64(f.Type.Size())}
		if f.Type.Kind() == reflect.Struct {
			gf.nested = reflectStruct(f.Type)
		}
		s.fields = append(s.fields, gf)
	}
	return s
}

// fieldChecks are the offset and size of every tagged field of s (nested
// structures too), as members of the C structure cname.
func fieldChecks(cname string, s *goStruct, prefix string, base uint64) []layoutCheck {
	var out []layoutCheck
	for _, f := range s.fields {
		if f.tag == "" {
			continue
		}
		path := prefix + f.tag
		out = append(out,
			layoutCheck{fmt.Sprintf("offsetof(%s, %s)", cname, path), base + f.off},
			layoutCheck{fmt.Sprintf("sizeof(((%s *)0)->%s)", cname, path), f.size})
		if f.nested != nil {
			out = append(out, fieldChecks(cname, f.nested, path+".", base+f.off)...)
		}
	}
	return out
}

// layoutChecks lists every check, with the Go side's values from layout
// (a mirror's layout by its Go type name).
func layoutChecks(layout func(goName string) *goStruct) []layoutCheck {
	var checks []layoutCheck
	for _, m := range mirrors {
		s := layout(m.t.Name())
		if m.whole {
			checks = append(checks, layoutCheck{"sizeof(" + m.c + ")", s.size},
				layoutCheck{"_Alignof(" + m.c + ")", s.align})
		}
		checks = append(checks, fieldChecks(m.c, s, "", 0)...)
	}
	sendWR := layout("ibvSendWR").field("WR").off
	wrOff := func(word int) uint64 { return sendWR + uint64(word)*8 }
	return append(checks,
		layoutCheck{"sizeof(union ibv_gid)", 16},
		layoutCheck{"_Alignof(union ibv_gid)", layout("ibvGlobalRoute").align},
		layoutCheck{"sizeof(pthread_mutex_t)", layout("ibvContext").field("Mutex").size},
		layoutCheck{"(uintptr_t)__VERBS_ABI_IS_EXTENDED", uint64(verbsABIIsExtended)},
		layoutCheck{"offsetof(struct ibv_send_wr, wr.rdma.remote_addr)", wrOff(wrRDMARemoteAddr)},
		layoutCheck{"offsetof(struct ibv_send_wr, wr.rdma.rkey)", wrOff(wrRDMARKey)},
		layoutCheck{"offsetof(struct ibv_send_wr, wr.atomic.remote_addr)", wrOff(wrAtomicRemoteAddr)},
		layoutCheck{"offsetof(struct ibv_send_wr, wr.atomic.compare_add)", wrOff(wrAtomicCompareAdd)},
		layoutCheck{"offsetof(struct ibv_send_wr, wr.atomic.swap)", wrOff(wrAtomicSwap)},
		layoutCheck{"offsetof(struct ibv_send_wr, wr.atomic.rkey)", wrOff(wrAtomicRKey)},
		layoutCheck{"sizeof(((struct ibv_send_wr *)0)->wr.rdma.rkey)", 4},
		layoutCheck{"sizeof(((struct ibv_send_wr *)0)->wr.atomic.rkey)", 4},
		layoutCheck{"sizeof(((struct ibv_async_event *)0)->element.port_num)", 4},
		layoutCheck{"offsetof(struct ibv_async_event, element.port_num)", 0},
		layoutCheck{"offsetof(struct ibv_wc, invalidated_rkey)", layout("ibvWC").field("ImmData").off},
	)
}

func hostLayout(goName string) *goStruct {
	for _, m := range mirrors {
		if m.t.Name() == goName {
			return reflectStruct(m.t)
		}
	}
	panic("no mirror " + goName)
}

// TestLayoutMatchesVerbsH compiles a C program against the installed
// <infiniband/verbs.h> that prints every offset and size layout.go relies
// on, and compares. Where the header or a C compiler is missing it skips,
// but under CI=true (the Makefile installs libibverbs-dev) it fails.
func TestLayoutMatchesVerbsH(t *testing.T) {
	cc := os.Getenv("CC")
	if cc == "" {
		cc = "cc"
	}
	if _, err := exec.LookPath(cc); err != nil {
		needHeader(t, fmt.Sprintf("no C compiler (%s): %v", cc, err))
	}
	checks := layoutChecks(hostLayout)
	var src strings.Builder
	src.WriteString("#include <stddef.h>\n#include <stdint.h>\n#include <stdio.h>\n#include <pthread.h>\n#include <infiniband/verbs.h>\nint main(void) {\n")
	for i, c := range checks {
		fmt.Fprintf(&src, "\tprintf(\"%d %%ju\\n\", (uintmax_t)(%s));\n", i, c.expr)
	}
	src.WriteString("\treturn 0;\n}\n")
	dir := t.TempDir()
	prog := filepath.Join(dir, "layout")
	if err := os.WriteFile(prog+".c", []byte(src.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(cc, "-o", prog, prog+".c").CombinedOutput()
	if err != nil {
		if bytes.Contains(out, []byte("infiniband/verbs.h")) && bytes.Contains(out, []byte("No such file")) {
			needHeader(t, "<infiniband/verbs.h> is not installed (Debian: libibverbs-dev)")
		}
		t.Fatalf("compiling the layout program: %v\n%s", err, out)
	}
	out, err = exec.Command(prog).Output()
	if err != nil {
		t.Fatalf("running the layout program: %v", err)
	}
	seen := 0
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		var i int
		var v uint64
		if _, err := fmt.Sscanf(sc.Text(), "%d %d", &i, &v); err != nil || i < 0 || i >= len(checks) {
			t.Fatalf("layout program said %q", sc.Text())
		}
		seen++
		if c := checks[i]; v != c.goes {
			t.Errorf("%s: verbs.h says %d, layout.go %d", c.expr, v, c.goes)
		}
	}
	if seen != len(checks) {
		t.Fatalf("layout program printed %d of %d values", seen, len(checks))
	}
	if !t.Failed() {
		t.Logf("%d offsets and sizes match verbs.h", len(checks))
	}
}

func needHeader(t *testing.T, why string) {
	t.Helper()
	if ci, _ := strconv.ParseBool(os.Getenv("CI")); ci {
		t.Fatalf("%s; CI must check the verbs layout", why)
	}
	t.Skip(why)
}

// TestLayoutMatchesVerbsHArm64 checks the mirrors as an arm64 build lays
// them out (go/types with arm64's sizes, layout_mutex48.go) against
// verbs.h as the AArch64 cross compiler sees it, with static assertions:
// cross builds need no C toolchain, but their structures must be right.
// Skipped without aarch64-linux-gnu-gcc (Debian: gcc-aarch64-linux-gnu,
// libc6-dev-arm64-cross), except under CI=true (the Makefile installs it).
func TestLayoutMatchesVerbsHArm64(t *testing.T) {
	cc := "aarch64-linux-gnu-gcc"
	if _, err := exec.LookPath(cc); err != nil {
		needHeader(t, fmt.Sprintf("no AArch64 cross compiler: %v", err))
	}
	layout := typesLayout(t, "arm64", "layout.go", "layout_mutex48.go")
	var src strings.Builder
	src.WriteString("#include <stddef.h>\n#include <stdint.h>\n#include <pthread.h>\n#include <infiniband/verbs.h>\n")
	n := 0
	for _, c := range layoutChecks(layout) {
		if strings.HasPrefix(c.expr, "(uintptr_t)") {
			continue // a pointer constant: not usable in a static assertion
		}
		fmt.Fprintf(&src, "_Static_assert((uintmax_t)(%s) == %dULL, \"%s: layout.go says %d\");\n", c.expr, c.goes, c.expr, c.goes)
		n++
	}
	file := filepath.Join(t.TempDir(), "layout_arm64.c")
	if err := os.WriteFile(file, []byte(src.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	// The cross compiler's own libc headers first; verbs.h and the
	// kernel's rdma headers are architecture-independent, from /usr/include.
	out, err := exec.Command(cc, "-fsyntax-only", "-idirafter", "/usr/include", file).CombinedOutput()
	if err != nil {
		if bytes.Contains(out, []byte("infiniband/verbs.h")) && bytes.Contains(out, []byte("No such file")) {
			needHeader(t, "<infiniband/verbs.h> is not installed (Debian: libibverbs-dev)")
		}
		t.Fatalf("arm64 layout: %v\n%s", err, out)
	}
	t.Logf("%d arm64 offsets and sizes match verbs.h", n)
}

// typesLayout type-checks the given files of this package for goarch and
// returns the layout of its struct types by name.
func typesLayout(t *testing.T, goarch string, files ...string) func(string) *goStruct {
	fset := token.NewFileSet()
	var parsed []*ast.File
	for _, name := range files {
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		parsed = append(parsed, f)
	}
	// The one type layout.go takes from elsewhere in the package.
	stub, err := parser.ParseFile(fset, "stub.go", "package verbs\ntype GID [16]byte\n", 0)
	if err != nil {
		t.Fatal(err)
	}
	sizes := types.SizesFor("gc", goarch)
	conf := types.Config{Sizes: sizes}
	pkg, err := conf.Check("verbs", fset, append(parsed, stub), nil)
	if err != nil {
		t.Fatal(err)
	}
	return func(name string) *goStruct {
		obj := pkg.Scope().Lookup(name)
		if obj == nil {
			t.Fatalf("no type %s in %v", name, files)
		}
		return typesStruct(obj.Type().Underlying().(*types.Struct), sizes)
	}
}

func typesStruct(st *types.Struct, sizes types.Sizes) *goStruct {
	s := &goStruct{size: uint64(sizes.Sizeof(st)), align: uint64(sizes.Alignof(st))}
	var vars []*types.Var
	for i := range st.NumFields() {
		vars = append(vars, st.Field(i))
	}
	offsets := sizes.Offsetsof(vars)
	for i, v := range vars {
		f := goField{name: v.Name(), tag: reflect.StructTag(st.Tag(i)).Get("c"),
			off: uint64(offsets[i]), size: uint64(sizes.Sizeof(v.Type()))}
		if nested, ok := v.Type().Underlying().(*types.Struct); ok {
			f.nested = typesStruct(nested, sizes)
		}
		s.fields = append(s.fields, f)
	}
	return s
}
