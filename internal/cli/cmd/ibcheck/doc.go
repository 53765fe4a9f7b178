// Package ibcheck is python-rdma's ibcheck family (ibchecknode ...
// ibclearerrors), with ibqueryerrors and ibswportwatch while their counters
// and thresholds move to internal/counters.
package ibcheck
