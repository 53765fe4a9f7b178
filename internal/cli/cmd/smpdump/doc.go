// Package smpdump is the smpdump command: the raw data of any SMP attribute.
package smpdump
