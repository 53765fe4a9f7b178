// Package setguid is python-rdma's set_guid command: alias GUIDs of a port
// programmed through the SA.
package setguid
