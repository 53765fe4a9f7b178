// Package exporter is the "ibtool exporter" command: the Prometheus exporter
// of internal/exporter, served over HTTP or written once.
package exporter
