package query

import (
	"context"
)

// Forwarding tables (IBA 14.2.5.10, 14.2.5.12): a switch's LinearForwardingTable
// is read in blocks of 64 LIDs (the attribute modifier is the block
// number), its MulticastForwardingTable in blocks of 32 MLIDs from 0xC000
// and chunks of 16 ports (modifier: block | chunk<<28).

const (
	// LIDsPerLFTBlock is the number of LIDs in one LinearForwardingTable block.
	LIDsPerLFTBlock = 64
	// MLIDsPerMFTBlock is the number of MLIDs in one MulticastForwardingTable block.
	MLIDsPerMFTBlock = 32
	// PortsPerMFTChunk is the number of ports in one port mask of an MFT block.
	PortsPerMFTChunk = 16
	// MinMLID and MaxMLID bound the multicast LIDs (IBA 4.1.1).
	MinMLID = 0xC000
	MaxMLID = 0xFFFE
	// MaxUnicastLID is the highest unicast LID.
	MaxUnicastLID = 0xBFFF
)

// LFTJobs are the jobs that read LinearForwardingTable blocks first..last
// of the switch at d.
func LFTJobs(d Dest, first, last int) []Job {
	var jobs []Job
	for b := first; b <= last; b++ {
		jobs = append(jobs, Job{Dest: d, Mod: uint32(b)})
	}
	return jobs
}

// MFTJobs are the jobs that read the MulticastForwardingTable blocks
// holding MLIDs first..last of a switch at d with nports ports: for each
// block, one job per chunk of 16 ports, chunk-minor.
func MFTJobs(d Dest, first, last, nports int) []Job {
	chunks := MFTChunks(nports)
	var jobs []Job
	for b := first / MLIDsPerMFTBlock; b <= last/MLIDsPerMFTBlock; b++ {
		for ch := 0; ch < chunks; ch++ {
			mod := uint32(b-MinMLID/MLIDsPerMFTBlock) | uint32(ch)<<28
			jobs = append(jobs, Job{Dest: d, Mod: mod})
		}
	}
	return jobs
}

// MFTChunks is the number of 16-port masks that cover ports 0..nports.
func MFTChunks(nports int) int { return (nports + PortsPerMFTChunk) / PortsPerMFTChunk }

// FanOutGroups is FanOut over groups of jobs (the tables of many switches
// read at once): all jobs are in flight together, and the results come
// back grouped as the jobs were.
func FanOutGroups[T any, P Struct[T]](ctx context.Context, c *Client, groups [][]Job) [][]Result[T] {
	var all []Job
	for _, g := range groups {
		all = append(all, g...)
	}
	res := FanOut[T, P](ctx, c, all)
	out := make([][]Result[T], len(groups))
	for i, g := range groups {
		out[i], res = res[:len(g):len(g)], res[len(g):]
	}
	return out
}
