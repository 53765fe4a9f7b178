// Package ibcc is the congestion-control pair ibccquery and ibccconfig (IBA
// annex A10), as infiniband-diags has them.
package ibcc
