package ctext

import (
	"fmt"
	"net/netip"
	"strconv"
)

// InetNtop6 formats an IPv6 address (a GID) as glibc's inet_ntop(AF_INET6)
// does, which the C tools print: the longest run of two or more zero words
// (the first of equal runs) becomes "::", and an address whose first six
// words are zero (or five, then ffff) ends in dotted IPv4 form, so a GID
// with a zero prefix prints as "::0.16.0.1". Go's netip differs in that
// last case (it writes "::10:1").
func InetNtop6(a [16]byte) string {
	var w [8]uint16
	for i := range w {
		w[i] = uint16(a[2*i])<<8 | uint16(a[2*i+1])
	}
	bestBase, bestLen := zeroRun(w)
	b := make([]byte, 0, 40)
	for i := 0; i < 8; i++ {
		if bestBase >= 0 && i >= bestBase && i < bestBase+bestLen {
			if i == bestBase {
				b = append(b, ':')
			}
			continue
		}
		if i != 0 {
			b = append(b, ':')
		}
		if i == 6 && bestBase == 0 && (bestLen == 6 || bestLen == 5 && w[5] == 0xffff) {
			return fmt.Sprintf("%s%d.%d.%d.%d", b, a[12], a[13], a[14], a[15])
		}
		b = strconv.AppendUint(b, uint64(w[i]), 16)
	}
	if bestBase >= 0 && bestBase+bestLen == 8 {
		b = append(b, ':')
	}
	return string(b)
}

// zeroRun is the run of zero words inet_ntop writes as "::": the longest,
// the first of equal ones, and only one of two or more words (base -1:
// none).
func zeroRun(w [8]uint16) (base, n int) {
	base = -1
	for i := 0; i < 8; {
		if w[i] != 0 {
			i++
			continue
		}
		j := i
		for j < 8 && w[j] == 0 {
			j++
		}
		if j-i > n {
			base, n = i, j-i
		}
		i = j
	}
	if n < 2 {
		return -1, 0
	}
	return base, n
}

// InetPton6 reads IPv6 text as glibc's inet_pton(AF_INET6) does: the
// eight words with an optional "::" and IPv4 tail, no zone, no IPv4
// address alone.
func InetPton6(s string) ([16]byte, bool) {
	a, err := netip.ParseAddr(s)
	if err != nil || !a.Is6() || a.Zone() != "" {
		return [16]byte{}, false
	}
	return a.As16(), true
}
