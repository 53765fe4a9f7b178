package ctext

import (
	"fmt"
	"strings"
	"syscall"
)

// CString is a NUL-padded C char array as a Go string: up to its first NUL.
func CString(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

// StrnEqual is strncmp(a, b, n) == 0 for C strings: equal up to the first
// NUL of each, or in their first n bytes.
func StrnEqual(a, b string, n int) bool {
	a, b = CString([]byte(a)), CString([]byte(b))
	if len(a) > n {
		a = a[:n]
	}
	if len(b) > n {
		b = b[:n]
	}
	return a == b
}

// Strerror is glibc's strerror(errno): Go's text of the errno value with
// glibc's capital, and glibc's "Unknown error N" for a value it lacks.
func Strerror(errno int) string {
	if errno == 0 {
		return "Success"
	}
	msg := syscall.Errno(errno).Error()
	if errno < 0 || strings.HasPrefix(msg, "errno ") {
		return fmt.Sprintf("Unknown error %d", errno)
	}
	return strings.ToUpper(msg[:1]) + msg[1:]
}
