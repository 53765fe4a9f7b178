// Package setportstate is python-rdma's set_port_state and init_all_ports:
// port states changed across the fabric along routes that stay up.
package setportstate
