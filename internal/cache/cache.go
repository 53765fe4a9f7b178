// Package cache stores the fabric model on disk in libibnetdisc's cache
// format, the file `ibnetdiscover --cache` writes and `--load-cache` reads,
// so that ibtool and infiniband-diags read each other's files.
//
// # The main file
//
// Write produces exactly what libibnetdisc's ibnd_cache_fabric writes for
// the same fabric; docs/cache.md gives the byte layout. All integers are
// little-endian; the attribute blobs (NodeInfo, NodeDescription,
// SwitchInfo, PortInfo) are the raw 64-byte SMP data in wire order. Two
// orders matter for byte identity:
//
//   - Node records: libibnetdisc prepends each new node to its list, so the
//     file lists nodes newest first. Fabric.Nodes is in discovery order, so
//     Read reverses the records and Write writes Nodes last to first.
//   - Port records follow libibnetdisc's port GUID hash table: bucket
//     HASHGUID(guid) % 137 in increasing order, where HASHGUID(g) =
//     (uint32(g)*101) ^ (uint32(g>>32)*103); within a bucket nodes in file
//     order and ports from the highest number down. That is the order
//     libibnetdisc itself writes a fabric it loaded from a cache, and what
//     its discovery produced in every fabric we compared, so
//     Write(Read(x)) == x byte for byte for files written by ibnetdiscover.
//
// A port record is written for every port a node holds (Node.Ports, index =
// port number) and nothing else; a link is written only when the remote port
// is itself written, so every reference in the file resolves (the writer
// rule that libibnetdisc's loaders rely on). A port whose PortInfo could not
// be read is written with a zero PortInfo.
//
// # The companion file
//
// The libibnetdisc format has no room for what ibtool knows beyond it: the
// directed route each node was reached by, which attributes could not be read
// (a zero blob in the main file is otherwise indistinguishable from a real
// one), and the errors of the walk. Write puts them in a companion file next
// to the main one, `<path>.ibtool` (CompanionSuffix), in JSON; C loaders never
// open it, and the main file stays byte-compatible with ibnetdiscover's. The
// companion records the size and SHA-256 of the main file it belongs to, and
// Read uses it only when they match: a cache rewritten by a C tool (or
// copied without its companion) loads as libibnetdisc would load it, with
// empty DR paths. Write removes a stale companion when the fabric has
// nothing to put in one.
//
// # Errors
//
// Reading never panics and allocates in proportion to the file's size, not
// to the counts its header claims. A malformed file gives a *FormatError
// naming the record and byte offset at fault.
package cache

import (
	"fmt"

	"github.com/ibtool/ibtool/internal/discovery"
)

// Format constants (libibnetdisc/ibnetdisc_cache.c).
const (
	Magic   = 0x8FE7832B
	Version = 1

	blobLen       = 64             // IB_SMP_DATA_SIZE: one attribute's data
	headerLen     = 28             // magic, version, counts, from GUID, max hops
	nodeFixedLen  = 15 + 3*blobLen // a node record without its port keys
	portKeyLen    = 8 + 1          // port GUID, port number
	portRecordLen = 31 + blobLen   // one port record
	hashSize      = 137            // HTSZ, the port hash table's size
	maxStoredKeys = 255            // a node's key count is one byte
	filePerm      = 0o644          // libibnetdisc creates caches 0644 (& ~umask)
)

// HashGUID is libibnetdisc's HASHGUID: the port and node hash tables use
// bucket HashGUID(guid) % 137.
func HashGUID(guid uint64) uint32 {
	return uint32(guid)*101 ^ uint32(guid>>32)*103
}

// FormatError is a malformed cache file: what is wrong and where.
type FormatError struct {
	// Path is the file, "" when decoding a reader.
	Path string
	// Offset is the byte offset of the record (or field) at fault.
	Offset int64
	// Record names it: "header", "node record 3", "port record 17"
	// (numbered from 1 in file order).
	Record string
	// Msg says what is wrong.
	Msg string
}

func (e *FormatError) Error() string {
	where := "cache"
	if e.Path != "" {
		where = "cache " + e.Path
	}
	return fmt.Sprintf("%s: %s at byte %d: %s", where, e.Record, e.Offset, e.Msg)
}

// WriteOptions adjusts Write and Encode.
type WriteOptions struct {
	// BucketGUID, when set, gives the GUID a port record is hashed by for
	// ordering, instead of the port's GUID. ibcacheedit uses it: libibnetdisc
	// changes GUIDs in place without rehashing, so its output keeps the
	// ports in the buckets of their old GUIDs.
	BucketGUID func(*discovery.Port) uint64
}
