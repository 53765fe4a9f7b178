// Package ibqueryerrors is the ibqueryerrors command: the error counters
// of every port of the fabric (or of one node) against the thresholds of
// infiniband-diags' threshold file, in the C tool's words, and their
// resets (-k/-K).
package ibqueryerrors
