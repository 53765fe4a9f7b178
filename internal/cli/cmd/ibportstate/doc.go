// Package ibportstate is the ibportstate command: a port's state, speed and
// width, queried or changed.
package ibportstate
