// Package ibstat is ibstat and ibstatus: the local CAs and ports.
package ibstat
