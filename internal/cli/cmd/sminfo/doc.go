// Package sminfo is the sminfo command: the subnet manager's SMInfo, queried
// or set.
package sminfo
