// Package subnetdiff is python-rdma's subnet_diff command: a saved fabric
// compared with the current one.
package subnetdiff
