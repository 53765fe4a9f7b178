// Package decodemad is the decode_mad command: MADs given in hex decoded
// field by field, as python-rdma's decode_mad prints them.
package decodemad
