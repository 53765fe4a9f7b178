//go:build cgo

package verbs

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <endian.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/verbs.h>

// The libibverbs entry points, resolved with dlsym so nothing links against
// the library. Verbs that verbs.h implements inline (post_send, post_recv,
// poll_cq, req_notify_cq, and the extended query_port/query_device_ex
// dispatch) go through the context's ops table and need no symbol.
struct vb_fns {
	struct ibv_device **(*get_device_list)(int *);
	void (*free_device_list)(struct ibv_device **);
	__be64 (*get_device_guid)(struct ibv_device *);
	struct ibv_context *(*open_device)(struct ibv_device *);
	int (*close_device)(struct ibv_context *);
	int (*query_device)(struct ibv_context *, struct ibv_device_attr *);
	int (*query_port)(struct ibv_context *, uint8_t, struct _compat_ibv_port_attr *);
	int (*query_gid)(struct ibv_context *, uint8_t, int, union ibv_gid *);
	int (*query_gid_ex)(struct ibv_context *, uint32_t, uint32_t, struct ibv_gid_entry *, uint32_t, size_t);
	int (*query_pkey)(struct ibv_context *, uint8_t, int, __be16 *);
	struct ibv_pd *(*alloc_pd)(struct ibv_context *);
	int (*dealloc_pd)(struct ibv_pd *);
	struct ibv_mr *(*reg_mr)(struct ibv_pd *, void *, size_t, int);
	int (*dereg_mr)(struct ibv_mr *);
	struct ibv_comp_channel *(*create_comp_channel)(struct ibv_context *);
	int (*destroy_comp_channel)(struct ibv_comp_channel *);
	struct ibv_cq *(*create_cq)(struct ibv_context *, int, void *, struct ibv_comp_channel *, int);
	int (*destroy_cq)(struct ibv_cq *);
	int (*get_cq_event)(struct ibv_comp_channel *, struct ibv_cq **, void **);
	void (*ack_cq_events)(struct ibv_cq *, unsigned int);
	struct ibv_qp *(*create_qp)(struct ibv_pd *, struct ibv_qp_init_attr *);
	int (*modify_qp)(struct ibv_qp *, struct ibv_qp_attr *, int);
	int (*query_qp)(struct ibv_qp *, struct ibv_qp_attr *, int, struct ibv_qp_init_attr *);
	int (*destroy_qp)(struct ibv_qp *);
	int (*get_async_event)(struct ibv_context *, struct ibv_async_event *);
	void (*ack_async_event)(struct ibv_async_event *);
};
static struct vb_fns vb;

static char vb_err[512];

// vb_load opens the library and resolves every entry point; NULL on
// success, else why not. vb changes only on success.
static const char *vb_load(const char *lib) {
	struct vb_fns f;
	void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		const char *e = dlerror();
		snprintf(vb_err, sizeof vb_err, "%s", e ? e : "dlopen failed");
		return vb_err;
	}
#define VB_NEED(field, sym) \
	if (!(*(void **)(&f.field) = dlsym(h, sym))) { \
		snprintf(vb_err, sizeof vb_err, "%s: symbol %s not found", lib, sym); \
		dlclose(h); \
		return vb_err; \
	}
	VB_NEED(get_device_list, "ibv_get_device_list");
	VB_NEED(free_device_list, "ibv_free_device_list");
	VB_NEED(get_device_guid, "ibv_get_device_guid");
	VB_NEED(open_device, "ibv_open_device");
	VB_NEED(close_device, "ibv_close_device");
	VB_NEED(query_device, "ibv_query_device");
	VB_NEED(query_port, "ibv_query_port");
	VB_NEED(query_gid, "ibv_query_gid");
	VB_NEED(query_pkey, "ibv_query_pkey");
	VB_NEED(alloc_pd, "ibv_alloc_pd");
	VB_NEED(dealloc_pd, "ibv_dealloc_pd");
	VB_NEED(reg_mr, "ibv_reg_mr");
	VB_NEED(dereg_mr, "ibv_dereg_mr");
	VB_NEED(create_comp_channel, "ibv_create_comp_channel");
	VB_NEED(destroy_comp_channel, "ibv_destroy_comp_channel");
	VB_NEED(create_cq, "ibv_create_cq");
	VB_NEED(destroy_cq, "ibv_destroy_cq");
	VB_NEED(get_cq_event, "ibv_get_cq_event");
	VB_NEED(ack_cq_events, "ibv_ack_cq_events");
	VB_NEED(create_qp, "ibv_create_qp");
	VB_NEED(modify_qp, "ibv_modify_qp");
	VB_NEED(query_qp, "ibv_query_qp");
	VB_NEED(destroy_qp, "ibv_destroy_qp");
	VB_NEED(get_async_event, "ibv_get_async_event");
	VB_NEED(ack_async_event, "ibv_ack_async_event");
#undef VB_NEED
	// Optional: rdma-core 31 and later.
	*(void **)(&f.query_gid_ex) = dlsym(h, "_ibv_query_gid_ex");
	vb = f;
	return NULL;
}

static int vb_has_query_gid_ex(void) { return vb.query_gid_ex != NULL; }

static struct ibv_device **vb_get_device_list(int *n) { return vb.get_device_list(n); }
static void vb_free_device_list(struct ibv_device **l) { vb.free_device_list(l); }
static struct ibv_device *vb_device_at(struct ibv_device **l, int i) { return l[i]; }
static uint64_t vb_device_guid(struct ibv_device *d) { return be64toh(vb.get_device_guid(d)); }
static struct ibv_context *vb_open_device(struct ibv_device *d) { return vb.open_device(d); }
static int vb_close_device(struct ibv_context *c) { return vb.close_device(c); }
static int vb_query_device(struct ibv_context *c, struct ibv_device_attr *a) { return vb.query_device(c, a); }

// Extended device query through the provider when it has one, the basic
// query otherwise (zeros for the extended fields).
static int vb_query_device_ex(struct ibv_context *c, struct ibv_device_attr_ex *a) {
	struct verbs_context *vc = verbs_get_ctx_op(c, query_device_ex);
	int rc = EOPNOTSUPP;
	memset(a, 0, sizeof(*a));
	if (vc)
		rc = vc->query_device_ex(c, NULL, a, sizeof(*a));
	if (rc == EOPNOTSUPP || rc == ENOSYS) {
		memset(a, 0, sizeof(*a));
		rc = vb.query_device(c, &a->orig_attr);
	}
	return rc;
}

// Port query through the provider's extended op, which fills the whole
// current struct; the exported function only knows the old, shorter one.
static int vb_query_port(struct ibv_context *c, uint8_t port, struct ibv_port_attr *a) {
	struct verbs_context *vc = verbs_get_ctx_op(c, query_port);
	memset(a, 0, sizeof(*a));
	if (vc)
		return vc->query_port(c, port, a, sizeof(*a));
	return vb.query_port(c, port, (struct _compat_ibv_port_attr *)a);
}

static int vb_query_gid(struct ibv_context *c, uint8_t port, int i, union ibv_gid *g) { return vb.query_gid(c, port, i, g); }
static int vb_query_gid_ex(struct ibv_context *c, uint32_t port, uint32_t i, struct ibv_gid_entry *e) {
	return vb.query_gid_ex(c, port, i, e, 0, sizeof(*e));
}
static int vb_query_pkey(struct ibv_context *c, uint8_t port, int i, uint16_t *pkey) {
	__be16 v;
	int rc = vb.query_pkey(c, port, i, &v);
	*pkey = be16toh(v);
	return rc;
}
static struct ibv_pd *vb_alloc_pd(struct ibv_context *c) { return vb.alloc_pd(c); }
static int vb_dealloc_pd(struct ibv_pd *pd) { return vb.dealloc_pd(pd); }
static struct ibv_mr *vb_reg_mr(struct ibv_pd *pd, void *addr, size_t len, int access) { return vb.reg_mr(pd, addr, len, access); }
static int vb_dereg_mr(struct ibv_mr *mr) { return vb.dereg_mr(mr); }
static struct ibv_comp_channel *vb_create_comp_channel(struct ibv_context *c) { return vb.create_comp_channel(c); }
static int vb_destroy_comp_channel(struct ibv_comp_channel *ch) { return vb.destroy_comp_channel(ch); }
static struct ibv_cq *vb_create_cq(struct ibv_context *c, int cqe, struct ibv_comp_channel *ch, int vec) {
	return vb.create_cq(c, cqe, NULL, ch, vec);
}
static int vb_destroy_cq(struct ibv_cq *cq) { return vb.destroy_cq(cq); }

// Reads one completion event and acknowledges it at once.
static int vb_get_cq_event(struct ibv_comp_channel *ch, struct ibv_cq **cq) {
	void *cq_ctx;
	int rc = vb.get_cq_event(ch, cq, &cq_ctx);
	if (rc == 0)
		vb.ack_cq_events(*cq, 1);
	return rc;
}

static int vb_req_notify_cq(struct ibv_cq *cq, int solicited) { return ibv_req_notify_cq(cq, solicited); }
static int vb_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc) { return ibv_poll_cq(cq, n, wc); }
static uint32_t vb_wc_imm(struct ibv_wc *wc) { return wc->wc_flags & IBV_WC_WITH_IMM ? be32toh(wc->imm_data) : wc->invalidated_rkey; }

static struct ibv_qp *vb_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *a) { return vb.create_qp(pd, a); }
static int vb_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask) { return vb.modify_qp(qp, a, mask); }
static int vb_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask) {
	struct ibv_qp_init_attr init;
	return vb.query_qp(qp, a, mask, &init);
}
static int vb_destroy_qp(struct ibv_qp *qp) { return vb.destroy_qp(qp); }

// Work requests arrive from Go as flat records without pointers in a
// C-allocated scratch area; the shims build the linked lists libibverbs
// wants on the C stack.
#define VB_MAX_BATCH 64
typedef struct {
	uint64_t wr_id, remote_addr, compare_add, swap;
	uint32_t rkey, opcode, send_flags, imm_data, num_sge, first_sge;
} vb_wr;
typedef struct {
	vb_wr wr[VB_MAX_BATCH];
	struct ibv_sge sge[];
} vb_scratch;

static vb_scratch *vb_new_scratch(int nsge) { return calloc(1, sizeof(vb_scratch) + (size_t)nsge * sizeof(struct ibv_sge)); }
static vb_wr *vb_scratch_wr(vb_scratch *s) { return s->wr; }
static struct ibv_sge *vb_scratch_sge(vb_scratch *s) { return s->sge; }

static int vb_post_send(struct ibv_qp *qp, vb_scratch *s, int n, int *bad) {
	struct ibv_send_wr wr[VB_MAX_BATCH], *badwr = NULL;
	int i, rc;
	memset(wr, 0, sizeof(wr[0]) * n);
	for (i = 0; i < n; i++) {
		vb_wr *w = &s->wr[i];
		wr[i].wr_id = w->wr_id;
		wr[i].next = i + 1 < n ? &wr[i + 1] : NULL;
		wr[i].sg_list = w->num_sge ? &s->sge[w->first_sge] : NULL;
		wr[i].num_sge = w->num_sge;
		wr[i].opcode = w->opcode;
		wr[i].send_flags = w->send_flags;
		wr[i].imm_data = htobe32(w->imm_data);
		if (w->opcode == IBV_WR_ATOMIC_CMP_AND_SWP || w->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) {
			wr[i].wr.atomic.remote_addr = w->remote_addr;
			wr[i].wr.atomic.compare_add = w->compare_add;
			wr[i].wr.atomic.swap = w->swap;
			wr[i].wr.atomic.rkey = w->rkey;
		} else {
			wr[i].wr.rdma.remote_addr = w->remote_addr;
			wr[i].wr.rdma.rkey = w->rkey;
		}
	}
	rc = ibv_post_send(qp, wr, &badwr);
	*bad = badwr ? (int)(badwr - wr) : -1;
	return rc;
}

static int vb_post_recv(struct ibv_qp *qp, vb_scratch *s, int n, int *bad) {
	struct ibv_recv_wr wr[VB_MAX_BATCH], *badwr = NULL;
	int i, rc;
	memset(wr, 0, sizeof(wr[0]) * n);
	for (i = 0; i < n; i++) {
		vb_wr *w = &s->wr[i];
		wr[i].wr_id = w->wr_id;
		wr[i].next = i + 1 < n ? &wr[i + 1] : NULL;
		wr[i].sg_list = w->num_sge ? &s->sge[w->first_sge] : NULL;
		wr[i].num_sge = w->num_sge;
	}
	rc = ibv_post_recv(qp, wr, &badwr);
	*bad = badwr ? (int)(badwr - wr) : -1;
	return rc;
}

// Reads one async event and acknowledges it at once. elem is the CQ, QP,
// SRQ or WQ the event is about (NULL for port and device events), port the
// port number for port events.
static int vb_get_async_event(struct ibv_context *c, int *type, void **elem, int *port) {
	struct ibv_async_event ev;
	if (vb.get_async_event(c, &ev))
		return -1;
	*type = ev.event_type;
	*elem = NULL;
	*port = 0;
	switch (ev.event_type) {
	case IBV_EVENT_PORT_ACTIVE:
	case IBV_EVENT_PORT_ERR:
	case IBV_EVENT_LID_CHANGE:
	case IBV_EVENT_PKEY_CHANGE:
	case IBV_EVENT_SM_CHANGE:
	case IBV_EVENT_CLIENT_REREGISTER:
	case IBV_EVENT_GID_CHANGE:
		*port = ev.element.port_num;
		break;
	case IBV_EVENT_DEVICE_FATAL:
		break;
	default:
		*elem = ev.element.qp;
	}
	vb.ack_async_event(&ev);
	return 0;
}
*/
import "C"

import (
	"encoding/binary"
	"fmt"
	"syscall"
	"unsafe"
)

func cLoad(name string) error {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	if msg := C.vb_load(cname); msg != nil {
		return &UnavailableError{Library: name, Reason: C.GoString(msg)}
	}
	return nil
}

// callErr turns a verbs return code into an error: positive codes are
// errnos, negative ones mean "see errno".
func callErr(op string, rc C.int, errno error) error {
	if rc == 0 {
		return nil
	}
	if rc > 0 {
		return errnoErr(op, syscall.Errno(rc))
	}
	if e, ok := errno.(syscall.Errno); ok && e != 0 {
		return errnoErr(op, e)
	}
	return errnoErr(op, syscall.EIO)
}

// nullErr is the error for a constructor that returned NULL.
func nullErr(op string, errno error) error {
	if e, ok := errno.(syscall.Errno); ok && e != 0 {
		return errnoErr(op, e)
	}
	return errnoErr(op, syscall.ENOMEM)
}

// be64 converts a big-endian value read as a native integer.
func be64(v uint64) uint64 {
	var b [8]byte
	binary.NativeEndian.PutUint64(b[:], v)
	return binary.BigEndian.Uint64(b[:])
}

func goDevice(d *C.struct_ibv_device) Device {
	return Device{
		Name:      C.GoString(&d.name[0]),
		GUID:      uint64(C.vb_device_guid(d)),
		NodeType:  NodeType(d.node_type),
		Transport: Transport(d.transport_type),
		DevName:   C.GoString(&d.dev_name[0]),
		DevPath:   C.GoString(&d.dev_path[0]),
		IBDevPath: C.GoString(&d.ibdev_path[0]),
	}
}

// withDeviceList calls f with the current device list.
func withDeviceList(f func(list **C.struct_ibv_device, n int) error) error {
	var n C.int
	list, errno := C.vb_get_device_list(&n)
	if list == nil {
		if errno == syscall.ENOSYS {
			// No uverbs in this kernel: no devices.
			return f(nil, 0)
		}
		return nullErr("ibv_get_device_list", errno)
	}
	defer C.vb_free_device_list(list)
	return f(list, int(n))
}

func cDeviceList() ([]Device, error) {
	var devs []Device
	err := withDeviceList(func(list **C.struct_ibv_device, n int) error {
		for i := 0; i < n; i++ {
			devs = append(devs, goDevice(C.vb_device_at(list, C.int(i))))
		}
		return nil
	})
	return devs, err
}

func cOpenDevice(name string) (h handle, dev Device, asyncFD, nvec int, err error) {
	err = withDeviceList(func(list **C.struct_ibv_device, n int) error {
		var d *C.struct_ibv_device
		for i := 0; i < n && d == nil; i++ {
			cand := C.vb_device_at(list, C.int(i))
			if name == "" || C.GoString(&cand.name[0]) == name {
				d = cand
			}
		}
		if d == nil {
			if name == "" {
				return fmt.Errorf("%w: no RDMA devices found", ErrNoDevice)
			}
			return fmt.Errorf("%w: %q", ErrNoDevice, name)
		}
		dev = goDevice(d)
		ctx, errno := C.vb_open_device(d)
		if ctx == nil {
			return fmt.Errorf("%s: %w", dev.Name, nullErr("ibv_open_device", errno))
		}
		h, asyncFD, nvec = unsafe.Pointer(ctx), int(ctx.async_fd), int(ctx.num_comp_vectors)
		return nil
	})
	return
}

func cCloseDevice(h handle) error {
	rc, errno := C.vb_close_device((*C.struct_ibv_context)(h))
	return callErr("ibv_close_device", rc, errno)
}

func goDeviceAttr(a *C.struct_ibv_device_attr) DeviceAttr {
	return DeviceAttr{
		FWVer:                 C.GoString(&a.fw_ver[0]),
		NodeGUID:              be64(uint64(a.node_guid)),
		SysImageGUID:          be64(uint64(a.sys_image_guid)),
		MaxMRSize:             uint64(a.max_mr_size),
		PageSizeCap:           uint64(a.page_size_cap),
		VendorID:              uint32(a.vendor_id),
		VendorPartID:          uint32(a.vendor_part_id),
		HWVer:                 uint32(a.hw_ver),
		MaxQP:                 int(a.max_qp),
		MaxQPWR:               int(a.max_qp_wr),
		DeviceCapFlags:        uint32(a.device_cap_flags),
		MaxSGE:                int(a.max_sge),
		MaxSGERD:              int(a.max_sge_rd),
		MaxCQ:                 int(a.max_cq),
		MaxCQE:                int(a.max_cqe),
		MaxMR:                 int(a.max_mr),
		MaxPD:                 int(a.max_pd),
		MaxQPRdAtom:           int(a.max_qp_rd_atom),
		MaxEERdAtom:           int(a.max_ee_rd_atom),
		MaxResRdAtom:          int(a.max_res_rd_atom),
		MaxQPInitRdAtom:       int(a.max_qp_init_rd_atom),
		MaxEEInitRdAtom:       int(a.max_ee_init_rd_atom),
		AtomicCap:             AtomicCap(a.atomic_cap),
		MaxEE:                 int(a.max_ee),
		MaxRDD:                int(a.max_rdd),
		MaxMW:                 int(a.max_mw),
		MaxRawIPv6QP:          int(a.max_raw_ipv6_qp),
		MaxRawEthyQP:          int(a.max_raw_ethy_qp),
		MaxMcastGrp:           int(a.max_mcast_grp),
		MaxMcastQPAttach:      int(a.max_mcast_qp_attach),
		MaxTotalMcastQPAttach: int(a.max_total_mcast_qp_attach),
		MaxAH:                 int(a.max_ah),
		MaxFMR:                int(a.max_fmr),
		MaxMapPerFMR:          int(a.max_map_per_fmr),
		MaxSRQ:                int(a.max_srq),
		MaxSRQWR:              int(a.max_srq_wr),
		MaxSRQSGE:             int(a.max_srq_sge),
		MaxPKeys:              uint16(a.max_pkeys),
		LocalCAAckDelay:       uint8(a.local_ca_ack_delay),
		PhysPortCnt:           uint8(a.phys_port_cnt),
	}
}

func cQueryDevice(h handle) (DeviceAttr, error) {
	var a C.struct_ibv_device_attr
	rc, errno := C.vb_query_device((*C.struct_ibv_context)(h), &a)
	if err := callErr("ibv_query_device", rc, errno); err != nil {
		return DeviceAttr{}, err
	}
	return goDeviceAttr(&a), nil
}

func cQueryDeviceEx(h handle) (DeviceAttrEx, error) {
	var a C.struct_ibv_device_attr_ex
	rc, errno := C.vb_query_device_ex((*C.struct_ibv_context)(h), &a)
	if err := callErr("ibv_query_device_ex", rc, errno); err != nil {
		return DeviceAttrEx{}, err
	}
	return DeviceAttrEx{
		DeviceAttr: goDeviceAttr(&a.orig_attr),
		ODPCaps: ODPCaps{
			General: uint64(a.odp_caps.general_caps),
			RC:      uint32(a.odp_caps.per_transport_caps.rc_odp_caps),
			UC:      uint32(a.odp_caps.per_transport_caps.uc_odp_caps),
			UD:      uint32(a.odp_caps.per_transport_caps.ud_odp_caps),
		},
		CompletionTimestampMask: uint64(a.completion_timestamp_mask),
		HCACoreClock:            uint64(a.hca_core_clock),
		DeviceCapFlagsEx:        uint64(a.device_cap_flags_ex),
		TSOCaps:                 TSOCaps{MaxTSO: uint32(a.tso_caps.max_tso), SupportedQPTs: uint32(a.tso_caps.supported_qpts)},
		RSSCaps: RSSCaps{
			SupportedQPTs:              uint32(a.rss_caps.supported_qpts),
			MaxRWQIndirectionTables:    uint32(a.rss_caps.max_rwq_indirection_tables),
			MaxRWQIndirectionTableSize: uint32(a.rss_caps.max_rwq_indirection_table_size),
			RxHashFieldsMask:           uint64(a.rss_caps.rx_hash_fields_mask),
			RxHashFunction:             uint8(a.rss_caps.rx_hash_function),
		},
		MaxWQTypeRQ: uint32(a.max_wq_type_rq),
		PacketPacingCaps: PacketPacingCaps{
			QPRateLimitMin: uint32(a.packet_pacing_caps.qp_rate_limit_min),
			QPRateLimitMax: uint32(a.packet_pacing_caps.qp_rate_limit_max),
			SupportedQPTs:  uint32(a.packet_pacing_caps.supported_qpts),
		},
		RawPacketCaps: uint32(a.raw_packet_caps),
		TMCaps: TMCaps{
			MaxRndvHdrSize: uint32(a.tm_caps.max_rndv_hdr_size),
			MaxNumTags:     uint32(a.tm_caps.max_num_tags),
			Flags:          uint32(a.tm_caps.flags),
			MaxOps:         uint32(a.tm_caps.max_ops),
			MaxSGE:         uint32(a.tm_caps.max_sge),
		},
		CQModCaps:     CQModerationCaps{MaxCQCount: uint16(a.cq_mod_caps.max_cq_count), MaxCQPeriod: uint16(a.cq_mod_caps.max_cq_period)},
		MaxDMSize:     uint64(a.max_dm_size),
		XRCODPCaps:    uint32(a.xrc_odp_caps),
		PhysPortCntEx: uint32(a.phys_port_cnt_ex),
	}, nil
}

func cQueryPort(h handle, port uint8) (PortAttr, error) {
	var a C.struct_ibv_port_attr
	rc, errno := C.vb_query_port((*C.struct_ibv_context)(h), C.uint8_t(port), &a)
	if err := callErr("ibv_query_port", rc, errno); err != nil {
		return PortAttr{}, err
	}
	return PortAttr{
		State:         PortState(a.state),
		MaxMTU:        MTU(a.max_mtu),
		ActiveMTU:     MTU(a.active_mtu),
		GIDTblLen:     int(a.gid_tbl_len),
		PortCapFlags:  uint32(a.port_cap_flags),
		MaxMsgSz:      uint32(a.max_msg_sz),
		BadPKeyCntr:   uint32(a.bad_pkey_cntr),
		QKeyViolCntr:  uint32(a.qkey_viol_cntr),
		PKeyTblLen:    uint16(a.pkey_tbl_len),
		LID:           uint16(a.lid),
		SMLID:         uint16(a.sm_lid),
		LMC:           uint8(a.lmc),
		MaxVLNum:      uint8(a.max_vl_num),
		SMSL:          uint8(a.sm_sl),
		SubnetTimeout: uint8(a.subnet_timeout),
		InitTypeReply: uint8(a.init_type_reply),
		ActiveWidth:   uint8(a.active_width),
		ActiveSpeed:   uint8(a.active_speed),
		PhysState:     uint8(a.phys_state),
		LinkLayer:     LinkLayer(a.link_layer),
		Flags:         uint8(a.flags),
		PortCapFlags2: uint16(a.port_cap_flags2),
	}, nil
}

func cQueryGID(h handle, port uint8, index int) (GID, error) {
	var g C.union_ibv_gid
	rc, errno := C.vb_query_gid((*C.struct_ibv_context)(h), C.uint8_t(port), C.int(index), &g)
	if err := callErr("ibv_query_gid", rc, errno); err != nil {
		return GID{}, err
	}
	return *(*GID)(unsafe.Pointer(&g)), nil
}

func cQueryGIDEx(h handle, port, index uint32) (GIDEntry, bool, error) {
	if C.vb_has_query_gid_ex() == 0 {
		return GIDEntry{}, false, nil
	}
	var e C.struct_ibv_gid_entry
	rc, errno := C.vb_query_gid_ex((*C.struct_ibv_context)(h), C.uint32_t(port), C.uint32_t(index), &e)
	if err := callErr("ibv_query_gid_ex", rc, errno); err != nil {
		return GIDEntry{}, true, err
	}
	return GIDEntry{
		GID:       *(*GID)(unsafe.Pointer(&e.gid)),
		Index:     uint32(e.gid_index),
		Port:      uint32(e.port_num),
		Type:      GIDType(e.gid_type),
		NetdevIdx: uint32(e.ndev_ifindex),
	}, true, nil
}

func cQueryPKey(h handle, port uint8, index int) (uint16, error) {
	var v C.uint16_t
	rc, errno := C.vb_query_pkey((*C.struct_ibv_context)(h), C.uint8_t(port), C.int(index), &v)
	return uint16(v), callErr("ibv_query_pkey", rc, errno)
}

func cAllocPD(ctx handle) (handle, error) {
	pd, errno := C.vb_alloc_pd((*C.struct_ibv_context)(ctx))
	if pd == nil {
		return nil, nullErr("ibv_alloc_pd", errno)
	}
	return unsafe.Pointer(pd), nil
}

func cDeallocPD(pd handle) error {
	rc, errno := C.vb_dealloc_pd((*C.struct_ibv_pd)(pd))
	return callErr("ibv_dealloc_pd", rc, errno)
}

func cRegMR(pd handle, addr unsafe.Pointer, length int, access Access) (handle, uint32, uint32, error) {
	mr, errno := C.vb_reg_mr((*C.struct_ibv_pd)(pd), addr, C.size_t(length), C.int(access))
	if mr == nil {
		return nil, 0, 0, nullErr("ibv_reg_mr", errno)
	}
	return unsafe.Pointer(mr), uint32(mr.lkey), uint32(mr.rkey), nil
}

func cDeregMR(mr handle) error {
	rc, errno := C.vb_dereg_mr((*C.struct_ibv_mr)(mr))
	return callErr("ibv_dereg_mr", rc, errno)
}

func cCreateCompChannel(ctx handle) (handle, int, error) {
	ch, errno := C.vb_create_comp_channel((*C.struct_ibv_context)(ctx))
	if ch == nil {
		return nil, -1, nullErr("ibv_create_comp_channel", errno)
	}
	return unsafe.Pointer(ch), int(ch.fd), nil
}

func cDestroyCompChannel(ch handle) error {
	rc, errno := C.vb_destroy_comp_channel((*C.struct_ibv_comp_channel)(ch))
	return callErr("ibv_destroy_comp_channel", rc, errno)
}

func cCreateCQ(ctx handle, cqe int, ch handle, vector int) (handle, int, error) {
	cq, errno := C.vb_create_cq((*C.struct_ibv_context)(ctx), C.int(cqe), (*C.struct_ibv_comp_channel)(ch), C.int(vector))
	if cq == nil {
		return nil, 0, nullErr("ibv_create_cq", errno)
	}
	return unsafe.Pointer(cq), int(cq.cqe), nil
}

func cDestroyCQ(cq handle) error {
	rc, errno := C.vb_destroy_cq((*C.struct_ibv_cq)(cq))
	return callErr("ibv_destroy_cq", rc, errno)
}

func cGetCQEvent(ch handle) (handle, error) {
	var cq *C.struct_ibv_cq
	rc, errno := C.vb_get_cq_event((*C.struct_ibv_comp_channel)(ch), &cq)
	if err := callErr("ibv_get_cq_event", rc, errno); err != nil {
		return nil, err
	}
	return unsafe.Pointer(cq), nil
}

func cReqNotifyCQ(cq handle, solicited bool) error {
	s := C.int(0)
	if solicited {
		s = 1
	}
	rc, errno := C.vb_req_notify_cq((*C.struct_ibv_cq)(cq), s)
	return callErr("ibv_req_notify_cq", rc, errno)
}

func cNewPollScratch() handle {
	return C.calloc(maxBatch, C.sizeof_struct_ibv_wc)
}

func cFreeScratch(h handle) { C.free(h) }

func cPollCQ(cq, scratch handle, out []WorkCompletion) (int, error) {
	n := min(len(out), maxBatch)
	if n == 0 {
		return 0, nil
	}
	rc, errno := C.vb_poll_cq((*C.struct_ibv_cq)(cq), C.int(n), (*C.struct_ibv_wc)(scratch))
	if rc < 0 {
		return 0, callErr("ibv_poll_cq", rc, errno)
	}
	wcs := unsafe.Slice((*C.struct_ibv_wc)(scratch), int(rc))
	for i := range wcs {
		w := &wcs[i]
		out[i] = WorkCompletion{
			ID:           uint64(w.wr_id),
			Status:       WCStatus(w.status),
			Opcode:       WCOpcode(w.opcode),
			VendorErr:    uint32(w.vendor_err),
			ByteLen:      uint32(w.byte_len),
			QPNum:        uint32(w.qp_num),
			SrcQP:        uint32(w.src_qp),
			Flags:        WCFlags(w.wc_flags),
			PKeyIndex:    uint16(w.pkey_index),
			SLID:         uint16(w.slid),
			SL:           uint8(w.sl),
			DLIDPathBits: uint8(w.dlid_path_bits),
		}
		if out[i].Flags&(WCWithImm|WCWithInv) != 0 {
			out[i].ImmData = uint32(C.vb_wc_imm(w))
		}
	}
	return int(rc), nil
}

func cCreateQP(pd handle, attr *QPInitAttr, sendCQ, recvCQ handle) (handle, uint32, QPCap, error) {
	var a C.struct_ibv_qp_init_attr
	a.send_cq = (*C.struct_ibv_cq)(sendCQ)
	a.recv_cq = (*C.struct_ibv_cq)(recvCQ)
	a.cap.max_send_wr = C.uint32_t(attr.Cap.MaxSendWR)
	a.cap.max_recv_wr = C.uint32_t(attr.Cap.MaxRecvWR)
	a.cap.max_send_sge = C.uint32_t(attr.Cap.MaxSendSGE)
	a.cap.max_recv_sge = C.uint32_t(attr.Cap.MaxRecvSGE)
	a.cap.max_inline_data = C.uint32_t(attr.Cap.MaxInlineData)
	a.qp_type = C.enum_ibv_qp_type(attr.Type)
	if attr.SigAll {
		a.sq_sig_all = 1
	}
	qp, errno := C.vb_create_qp((*C.struct_ibv_pd)(pd), &a)
	if qp == nil {
		return nil, 0, QPCap{}, nullErr("ibv_create_qp", errno)
	}
	caps := QPCap{
		MaxSendWR:     uint32(a.cap.max_send_wr),
		MaxRecvWR:     uint32(a.cap.max_recv_wr),
		MaxSendSGE:    uint32(a.cap.max_send_sge),
		MaxRecvSGE:    uint32(a.cap.max_recv_sge),
		MaxInlineData: uint32(a.cap.max_inline_data),
	}
	return unsafe.Pointer(qp), uint32(qp.qp_num), caps, nil
}

func cDestroyQP(qp handle) error {
	rc, errno := C.vb_destroy_qp((*C.struct_ibv_qp)(qp))
	return callErr("ibv_destroy_qp", rc, errno)
}

func toCAH(src *AHAttr, dst *C.struct_ibv_ah_attr) {
	*(*GID)(unsafe.Pointer(&dst.grh.dgid)) = src.GRH.DGID
	dst.grh.flow_label = C.uint32_t(src.GRH.FlowLabel)
	dst.grh.sgid_index = C.uint8_t(src.GRH.SGIDIndex)
	dst.grh.hop_limit = C.uint8_t(src.GRH.HopLimit)
	dst.grh.traffic_class = C.uint8_t(src.GRH.TrafficClass)
	dst.dlid = C.uint16_t(src.DLID)
	dst.sl = C.uint8_t(src.SL)
	dst.src_path_bits = C.uint8_t(src.SrcPathBits)
	dst.static_rate = C.uint8_t(src.StaticRate)
	dst.is_global = 0
	if src.IsGlobal {
		dst.is_global = 1
	}
	dst.port_num = C.uint8_t(src.Port)
}

func fromCAH(src *C.struct_ibv_ah_attr) AHAttr {
	return AHAttr{
		GRH: GlobalRoute{
			DGID:         *(*GID)(unsafe.Pointer(&src.grh.dgid)),
			FlowLabel:    uint32(src.grh.flow_label),
			SGIDIndex:    uint8(src.grh.sgid_index),
			HopLimit:     uint8(src.grh.hop_limit),
			TrafficClass: uint8(src.grh.traffic_class),
		},
		DLID:        uint16(src.dlid),
		SL:          uint8(src.sl),
		SrcPathBits: uint8(src.src_path_bits),
		StaticRate:  uint8(src.static_rate),
		IsGlobal:    src.is_global != 0,
		Port:        uint8(src.port_num),
	}
}

func cModifyQP(qp handle, attr *QPAttr, mask QPAttrMask) error {
	var a C.struct_ibv_qp_attr
	a.qp_state = C.enum_ibv_qp_state(attr.State)
	a.cur_qp_state = C.enum_ibv_qp_state(attr.CurState)
	a.path_mtu = C.enum_ibv_mtu(attr.PathMTU)
	a.qkey = C.uint32_t(attr.QKey)
	a.rq_psn = C.uint32_t(attr.RQPSN)
	a.sq_psn = C.uint32_t(attr.SQPSN)
	a.dest_qp_num = C.uint32_t(attr.DestQPNum)
	a.qp_access_flags = C.uint(attr.AccessFlags)
	a.cap.max_send_wr = C.uint32_t(attr.Cap.MaxSendWR)
	a.cap.max_recv_wr = C.uint32_t(attr.Cap.MaxRecvWR)
	a.cap.max_send_sge = C.uint32_t(attr.Cap.MaxSendSGE)
	a.cap.max_recv_sge = C.uint32_t(attr.Cap.MaxRecvSGE)
	a.cap.max_inline_data = C.uint32_t(attr.Cap.MaxInlineData)
	toCAH(&attr.AH, &a.ah_attr)
	a.pkey_index = C.uint16_t(attr.PKeyIndex)
	a.max_rd_atomic = C.uint8_t(attr.MaxRdAtomic)
	a.max_dest_rd_atomic = C.uint8_t(attr.MaxDestRdAtomic)
	a.min_rnr_timer = C.uint8_t(attr.MinRNRTimer)
	a.port_num = C.uint8_t(attr.Port)
	a.timeout = C.uint8_t(attr.Timeout)
	a.retry_cnt = C.uint8_t(attr.RetryCnt)
	a.rnr_retry = C.uint8_t(attr.RNRRetry)
	rc, errno := C.vb_modify_qp((*C.struct_ibv_qp)(qp), &a, C.int(mask))
	if err := callErr("ibv_modify_qp", rc, errno); err != nil {
		return fmt.Errorf("QP to %v: %w", attr.State, err)
	}
	return nil
}

func cQueryQP(qp handle, mask QPAttrMask) (QPAttr, error) {
	var a C.struct_ibv_qp_attr
	rc, errno := C.vb_query_qp((*C.struct_ibv_qp)(qp), &a, C.int(mask))
	if err := callErr("ibv_query_qp", rc, errno); err != nil {
		return QPAttr{}, err
	}
	return QPAttr{
		State:       QPState(a.qp_state),
		CurState:    QPState(a.cur_qp_state),
		PathMTU:     MTU(a.path_mtu),
		QKey:        uint32(a.qkey),
		RQPSN:       uint32(a.rq_psn),
		SQPSN:       uint32(a.sq_psn),
		DestQPNum:   uint32(a.dest_qp_num),
		AccessFlags: Access(a.qp_access_flags),
		Cap: QPCap{
			MaxSendWR:     uint32(a.cap.max_send_wr),
			MaxRecvWR:     uint32(a.cap.max_recv_wr),
			MaxSendSGE:    uint32(a.cap.max_send_sge),
			MaxRecvSGE:    uint32(a.cap.max_recv_sge),
			MaxInlineData: uint32(a.cap.max_inline_data),
		},
		AH:              fromCAH(&a.ah_attr),
		PKeyIndex:       uint16(a.pkey_index),
		MaxRdAtomic:     uint8(a.max_rd_atomic),
		MaxDestRdAtomic: uint8(a.max_dest_rd_atomic),
		MinRNRTimer:     uint8(a.min_rnr_timer),
		Port:            uint8(a.port_num),
		Timeout:         uint8(a.timeout),
		RetryCnt:        uint8(a.retry_cnt),
		RNRRetry:        uint8(a.rnr_retry),
	}, nil
}

func cNewPostScratch(nsge int) handle {
	return unsafe.Pointer(C.vb_new_scratch(C.int(nsge)))
}

// fillScratch copies work requests into the C scratch area; the caller has
// checked the batch and SGE limits.
func fillScratch(scratch handle, n int, each func(i int, w *C.vb_wr) []SGE) {
	s := (*C.vb_scratch)(scratch)
	wrs := unsafe.Slice(C.vb_scratch_wr(s), n)
	sgeBase := C.vb_scratch_sge(s)
	next := 0
	for i := range wrs {
		sges := each(i, &wrs[i])
		wrs[i].num_sge = C.uint32_t(len(sges))
		wrs[i].first_sge = C.uint32_t(next)
		if len(sges) > 0 {
			dst := unsafe.Slice((*C.struct_ibv_sge)(unsafe.Add(unsafe.Pointer(sgeBase), next*C.sizeof_struct_ibv_sge)), len(sges))
			for j, sg := range sges {
				dst[j].addr = C.uint64_t(sg.Addr)
				dst[j].length = C.uint32_t(sg.Length)
				dst[j].lkey = C.uint32_t(sg.LKey)
			}
		}
		next += len(sges)
	}
}

func cPostSend(qp, scratch handle, wrs []SendWR) error {
	fillScratch(scratch, len(wrs), func(i int, w *C.vb_wr) []SGE {
		r := &wrs[i]
		w.wr_id = C.uint64_t(r.ID)
		w.remote_addr = C.uint64_t(r.RemoteAddr)
		w.compare_add = C.uint64_t(r.CompareAdd)
		w.swap = C.uint64_t(r.Swap)
		w.rkey = C.uint32_t(r.RKey)
		w.opcode = C.uint32_t(r.Opcode)
		w.send_flags = C.uint32_t(r.Flags)
		w.imm_data = C.uint32_t(r.ImmData)
		return r.SGEs
	})
	var bad C.int
	rc, errno := C.vb_post_send((*C.struct_ibv_qp)(qp), (*C.vb_scratch)(scratch), C.int(len(wrs)), &bad)
	if rc == 0 {
		return nil
	}
	return postErr("ibv_post_send", rc, errno, int(bad), func(i int) uint64 { return wrs[i].ID })
}

func cPostRecv(qp, scratch handle, wrs []RecvWR) error {
	fillScratch(scratch, len(wrs), func(i int, w *C.vb_wr) []SGE {
		*w = C.vb_wr{}
		w.wr_id = C.uint64_t(wrs[i].ID)
		return wrs[i].SGEs
	})
	var bad C.int
	rc, errno := C.vb_post_recv((*C.struct_ibv_qp)(qp), (*C.vb_scratch)(scratch), C.int(len(wrs)), &bad)
	if rc == 0 {
		return nil
	}
	return postErr("ibv_post_recv", rc, errno, int(bad), func(i int) uint64 { return wrs[i].ID })
}

func postErr(op string, rc C.int, errno error, bad int, id func(int) uint64) error {
	e := &PostError{Op: op, Index: bad}
	var ve *Error
	if err := callErr(op, rc, errno); err != nil && asError(err, &ve) {
		e.Errno = ve.Errno
	}
	if bad >= 0 {
		e.WRID = id(bad)
	}
	return e
}

func asError(err error, target **Error) bool {
	e, ok := err.(*Error)
	if ok {
		*target = e
	}
	return ok
}

func cGetAsyncEvent(ctx handle) (EventType, handle, int, error) {
	var typ, port C.int
	var elem unsafe.Pointer
	rc, errno := C.vb_get_async_event((*C.struct_ibv_context)(ctx), &typ, &elem, &port)
	if err := callErr("ibv_get_async_event", rc, errno); err != nil {
		return 0, nil, 0, err
	}
	return EventType(typ), elem, int(port), nil
}
