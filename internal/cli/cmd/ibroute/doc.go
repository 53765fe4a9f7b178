// Package ibroute is the forwarding-table dumps: ibroute (one switch)
// and dump_fts with its old names dump_lfts and dump_mfts (every switch).
// The tables are read by internal/routing and printed by
// internal/cli/render as infiniband-diags 44 prints them.
package ibroute
