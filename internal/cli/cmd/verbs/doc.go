// Package verbs is the verbs commands ibv_devices, ibv_devinfo and rdma_bw,
// on internal/verbs.
package verbs
