// Package query is python-rdma's query command: any Get (or, with --write,
// Set) of any attribute of any class.
package query
