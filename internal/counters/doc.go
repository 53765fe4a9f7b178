// Package counters is the knowledge of PMA counters that commands, the
// exporter and the diagnosis share: AllPortSelect, summing counters as the
// IBA saturates them, and their JSON with data counters in bytes.
package counters
