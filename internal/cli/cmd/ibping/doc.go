// Package ibping is the ibping command: vendor-MAD pings, and their server
// (-S).
package ibping
