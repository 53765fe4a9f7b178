// Package setnodedesc is python-rdma's set_nodedesc command: the local CAs'
// node descriptions, shown or set.
package setnodedesc
