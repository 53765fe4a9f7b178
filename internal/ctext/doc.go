// Package ctext holds the C-compatible text helpers the commands share, so
// that each C convention is written once: numbers read as glibc's strtoul
// and strtol, C strings and strerror texts, IPv6 text as glibc's inet_ntop
// writes it, the appenders that format numbers as printf does, and the node
// type words of each C tool. It imports nothing of ibtool, so any package
// may use it.
package ctext
