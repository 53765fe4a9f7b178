package verbs

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unsafe"
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

// fieldChecks are the offset and size of every tagged field of t (nested
// structures too), as members of the C structure cname.
func fieldChecks(cname string, t reflect.Type, prefix string, base uintptr) []layoutCheck {
	var out []layoutCheck
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("c")
		if tag == "" {
			continue
		}
		path := prefix + tag
		out = append(out,
			layoutCheck{fmt.Sprintf("offsetof(%s, %s)", cname, path), uint64(base + f.Offset)},
			layoutCheck{fmt.Sprintf("sizeof(((%s *)0)->%s)", cname, path), uint64(f.Type.Size())})
		if f.Type.Kind() == reflect.Struct {
			out = append(out, fieldChecks(cname, f.Type, path+".", base+f.Offset)...)
		}
	}
	return out
}

func layoutChecks() []layoutCheck {
	var checks []layoutCheck
	for _, m := range mirrors {
		if m.whole {
			checks = append(checks, layoutCheck{"sizeof(" + m.c + ")", uint64(m.t.Size())},
				layoutCheck{"_Alignof(" + m.c + ")", uint64(m.t.Align())})
		}
		checks = append(checks, fieldChecks(m.c, m.t, "", 0)...)
	}
	var wr ibvSendWR
	wrOff := func(word int) uint64 { return uint64(unsafe.Offsetof(wr.WR) + uintptr(word)*8) }
	return append(checks,
		layoutCheck{"sizeof(union ibv_gid)", uint64(unsafe.Sizeof(GID{}))},
		layoutCheck{"_Alignof(union ibv_gid)", uint64(unsafe.Alignof(ibvGlobalRoute{}))},
		layoutCheck{"sizeof(pthread_mutex_t)", pthreadMutexSize},
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
		layoutCheck{"offsetof(struct ibv_wc, invalidated_rkey)", uint64(unsafe.Offsetof(ibvWC{}.ImmData))},
	)
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
	checks := layoutChecks()
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
