// Package counters is the knowledge of PMA counters (IBA 16.1) that the
// commands, the exporter, the diagnosis and tests share, without any
// text of a tool: reading the counters of many ports at once (Reader:
// a switch's sum by AllPortSelect, or its ports added up where its PMA
// lacks it), summing them as the IBA saturates them, resetting them;
// thresholds (one Thresholds type reading the tools' threshold files,
// with each tool's documented defaults) and judging counters by them;
// the names of the counters each tool prints and reads; and the data
// counters in bytes, with their JSON.
package counters
