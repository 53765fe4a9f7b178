// Package ibsysstat is the ibsysstat command: a host's system information
// over vendor MADs, and its server (-S).
package ibsysstat
