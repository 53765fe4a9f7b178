// Package smpquery is the smpquery command: SMP attributes of a node or
// port, formatted as libibmad prints them.
package smpquery
