package ibqueryerrors

// -s and -c: the counters whose errors are not reported.

import (
	"fmt"
	"strings"
)

// qeSuppressible are the names -s takes: PortCounters' fields
// (libibmad's IB_PC_FIRST_F..IB_PC_LAST_F).
var qeSuppressible = []string{
	"PortSelect", "CounterSelect", "SymbolErrorCounter", "LinkErrorRecoveryCounter", "LinkDownedCounter",
	"PortRcvErrors", "PortRcvRemotePhysicalErrors", "PortRcvSwitchRelayErrors", "PortXmitDiscards",
	"PortXmitConstraintErrors", "PortRcvConstraintErrors", "CounterSelect2", "LocalLinkIntegrityErrors",
	"ExcessiveBufferOverrunErrors", "VL15Dropped", "PortXmitData", "PortRcvData", "PortXmitPkts",
	"PortRcvPkts", "PortXmitWait",
}

// qeSupMax is the most counters the C tool suppresses (SUP_MAX).
const qeSupMax = 64

// suppressList is -s and -c: the counters suppressed, in the order given.
type suppressList struct {
	names   []string
	skipped []string // beyond qeSupMax
	err     error
}

func (l *suppressList) add(name string) {
	if len(l.names) >= qeSupMax {
		l.skipped = append(l.skipped, name)
		return
	}
	l.names = append(l.names, name)
}

func (l *suppressList) has(name string) bool {
	for _, n := range l.names {
		if n == name {
			return true
		}
	}
	return false
}

// suppressFlag is -s: counter names, comma-separated (empty items are
// skipped, as strtok does). An unknown name is an error.
type suppressFlag struct{ l *suppressList }

func (f suppressFlag) String() string { return "" }
func (f suppressFlag) Type() string   { return "<err1,err2,...>" }
func (f suppressFlag) Set(s string) error {
	for _, name := range strings.Split(s, ",") {
		switch {
		case name == "":
		case contains(qeSuppressible, name):
			f.l.add(name)
		case f.l.err == nil:
			f.l.err = fmt.Errorf("-s: unknown counter %q (counters: %s)", name, strings.Join(qeSuppressible, ","))
		}
	}
	return nil
}

// suppressCommonFlag is -c: PortRcvSwitchRelayErrors, the one "common"
// error, suppressed where -c stands among the -s.
type suppressCommonFlag struct{ l *suppressList }

func (f suppressCommonFlag) String() string   { return "" }
func (f suppressCommonFlag) Type() string     { return "bool" }
func (f suppressCommonFlag) IsBoolFlag() bool { return true }
func (f suppressCommonFlag) Set(s string) error {
	if s == "true" {
		f.l.add("PortRcvSwitchRelayErrors")
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}
