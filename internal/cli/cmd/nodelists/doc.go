// Package nodelists is the node lists (ibhosts, ibswitches, ibrouters,
// ibnodes) and python-rdma's ibprintca, ibprintswitch and ibprintrt.
package nodelists
