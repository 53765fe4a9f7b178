// Package ctext holds the C-compatible text helpers the commands share:
// numbers parsed as glibc's strtoul and strtol, the appenders that format
// numbers as printf does, and node type words.
package ctext
