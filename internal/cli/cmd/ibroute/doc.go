// Package ibroute is the forwarding-table commands: ibroute, dump_fts
// (dump_lfts, dump_mfts), ibtracert, ibfindnodesusing and check_lft_balance,
// while their routing model moves to internal/routing.
package ibroute
