// Package ibcheck is python-rdma's ibcheck family (ibchecknode ...
// ibclearerrors, ibdatacounts ...): the commands, their records and
// python-rdma's texts of them. The checks themselves are internal/health's,
// the counters and thresholds internal/counters'.
package ibcheck
