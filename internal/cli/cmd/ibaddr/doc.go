// Package ibaddr is the ibaddr command: the GID and LID range of a port, as
// infiniband-diags prints them.
package ibaddr
