package ctext

import (
	"strconv"

	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/mad"
)

// GUIDText and PortText print an end the script found no link for as
// empty, as its undefined hash entries print.
func GUIDText(g mad.GUID) string {
	if g == 0 {
		return ""
	}
	return g.String()
}

func PortText(p int) string {
	if p == 0 {
		return ""
	}
	return strconv.Itoa(p)
}

func NodeTypeStr(t int) string {
	switch t {
	case discovery.NodeSwitch:
		return "Switch"
	case discovery.NodeCA:
		return "CA"
	case discovery.NodeRouter:
		return "Router"
	}
	return "??"
}

func OrZero(s string) string {
	if s == "" {
		return "0"
	}
	return s
}

func Plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
