// Package diagnose is the one-sweep diagnosis of a fabric ("ibtool
// diagnose", docs/diagnose.md): a Sweep reads everything the checks need
// into a Snapshot, the Checks judge it, and Run orders their Findings
// into a Report. Checks never ask the fabric themselves, so a snapshot
// saved with Save and read back with Load is judged the same offline.
//
// A check is a family of rules with stable finding codes
// ("links.port_init"): walk, ids, sm, nodes, links, counters, pkeys and
// topology live here, one file each (the links' capability rule in
// capability.go; the health checks' reads in counterreads.go and
// hidden.go). The sweep only reads: Gets through the query layer, never a
// Set, never a counter reset.
package diagnose
