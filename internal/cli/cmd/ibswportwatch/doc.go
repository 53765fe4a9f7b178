// Package ibswportwatch is the ibswportwatch command: python-rdma's watch
// of a port's counters, each with its rate since the last read, or only
// those rising faster than their threshold.
package ibswportwatch
