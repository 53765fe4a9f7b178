// Package exporter is the "ibtool exporter" command: it runs
// ibtool-exporter (cmd/ibtool-exporter), the Prometheus exporter, with its
// arguments, so that ibtool itself links no Prometheus library.
package exporter
