// Package perfquery is the perfquery command: a port's performance counters,
// every counter group, and their resets.
package perfquery
