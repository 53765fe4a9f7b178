// Package vendstat is the vendstat command: Mellanox vendor-specific status
// of a device.
package vendstat
