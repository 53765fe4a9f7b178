package counters

import (
	"strings"
	"sync"

	"github.com/ibtool/ibtool/internal/mad"
)

// The names of the PortCounters counters (IBA 16.1.3.5) as the tools
// print and read them: mad's field names (libibmad's current ones, those
// of ibqueryerrors and its threshold file), python-rdma's member names,
// and libibmad 1.x's perfquery labels, which python-rdma prints the data
// counters with and accepts in threshold files.

// ErrorCounters are the counters ibqueryerrors judges, in its order:
// PortCounters' error counters in wire order, then PortXmitWait
// (ibqueryerrors.c print_results). QP1Dropped is not one of them.
var ErrorCounters = []string{
	"SymbolErrorCounter", "LinkErrorRecoveryCounter", "LinkDownedCounter", "PortRcvErrors",
	"PortRcvRemotePhysicalErrors", "PortRcvSwitchRelayErrors", "PortXmitDiscards",
	"PortXmitConstraintErrors", "PortRcvConstraintErrors", "LocalLinkIntegrityErrors",
	"ExcessiveBufferOverrunErrors", "VL15Dropped", "PortXmitWait",
}

// OldLabel is libibmad 1.x's perfquery label of a counter ("XmtData"),
// "" when it had none. A switch, not a map: a package-level map is built
// at every start of the program, whatever command runs.
func OldLabel(field string) string {
	switch field {
	case "PortRcvErrors":
		return "RcvErrors"
	case "PortXmitConstraintErrors":
		return "XmtConstraintErrors"
	case "SymbolErrorCounter":
		return "SymbolErrors"
	case "PortXmitDiscards":
		return "XmtDiscards"
	case "PortRcvRemotePhysicalErrors":
		return "RcvRemotePhysErrors"
	case "ExcessiveBufferOverrunErrors":
		return "ExcBufOverrunErrors"
	case "PortXmitData":
		return "XmtData"
	case "LinkErrorRecoveryCounter":
		return "LinkRecovers"
	case "PortRcvSwitchRelayErrors":
		return "RcvSwRelayErrors"
	case "PortXmitWait":
		return "XmtWait"
	case "LocalLinkIntegrityErrors":
		return "LinkIntegrityErrors"
	case "PortRcvData":
		return "RcvData"
	case "PortRcvConstraintErrors":
		return "RcvConstraintErrors"
	case "LinkDownedCounter":
		return "LinkDowned"
	case "PortXmitPkts":
		return "XmtPkts"
	case "PortRcvPkts":
		return "RcvPkts"
	}
	return ""
}

// PyName is python-rdma's name of a counter or PortInfo field: its
// structure member, lower camel case, except where the name starts with
// an acronym (VL15Dropped, LID).
func PyName(field string) string {
	if len(field) > 1 && field[1] >= 'A' && field[1] <= 'Z' {
		return field
	}
	return strings.ToLower(field[:1]) + field[1:]
}

// PortCounterFields are PortCounters' counters in wire order: every
// numeric field but PortSelect, the counter selects and reserved bits.
// The slice is shared: do not change it.
func PortCounterFields() []*mad.FieldDesc {
	portCounterFieldsOnce.Do(func() { portCounterFieldList = listPortCounterFields() })
	return portCounterFieldList
}

// The list is made on first use: a package-level sync.OnceValue call
// would run (and allocate) at every start of the program.
var (
	portCounterFieldsOnce sync.Once
	portCounterFieldList  []*mad.FieldDesc
)

func listPortCounterFields() []*mad.FieldDesc {
	var out []*mad.FieldDesc
	d := (&mad.PortCounters{}).Desc()
	for i := range d.Fields {
		f := &d.Fields[i]
		if f.Reserved || !f.IsNumber() || strings.HasPrefix(f.Name, "PortSelect") || strings.HasPrefix(f.Name, "CounterSelect") {
			continue
		}
		out = append(out, f)
	}
	return out
}

// LookupAny is the PortCounters counter any of whose names is name, in
// any case: the field's, python-rdma's, libibmad 1.x's or current label,
// or its JSON name. "" if none is.
func LookupAny(name string) string {
	for _, f := range PortCounterFields() {
		for _, n := range []string{f.Name, OldLabel(f.Name), f.Label, f.JSONName} {
			if n != "" && strings.EqualFold(n, name) {
				return f.Name
			}
		}
	}
	return ""
}

// Value is counter name of pc, read directly: the generic mad.Get is too
// slow for every port of a big fabric. ok is false for a name that is not
// a PortCounters counter.
func Value(pc *mad.PortCounters, name string) (v uint64, ok bool) {
	switch name {
	case "SymbolErrorCounter":
		return uint64(pc.SymbolErrorCounter), true
	case "LinkErrorRecoveryCounter":
		return uint64(pc.LinkErrorRecoveryCounter), true
	case "LinkDownedCounter":
		return uint64(pc.LinkDownedCounter), true
	case "PortRcvErrors":
		return uint64(pc.PortRcvErrors), true
	case "PortRcvRemotePhysicalErrors":
		return uint64(pc.PortRcvRemotePhysicalErrors), true
	case "PortRcvSwitchRelayErrors":
		return uint64(pc.PortRcvSwitchRelayErrors), true
	case "PortXmitDiscards":
		return uint64(pc.PortXmitDiscards), true
	case "PortXmitConstraintErrors":
		return uint64(pc.PortXmitConstraintErrors), true
	case "PortRcvConstraintErrors":
		return uint64(pc.PortRcvConstraintErrors), true
	case "LocalLinkIntegrityErrors":
		return uint64(pc.LocalLinkIntegrityErrors), true
	case "ExcessiveBufferOverrunErrors":
		return uint64(pc.ExcessiveBufferOverrunErrors), true
	case "QP1Dropped":
		return uint64(pc.QP1Dropped), true
	case "VL15Dropped":
		return uint64(pc.VL15Dropped), true
	case "PortXmitData":
		return uint64(pc.PortXmitData), true
	case "PortRcvData":
		return uint64(pc.PortRcvData), true
	case "PortXmitPkts":
		return uint64(pc.PortXmitPkts), true
	case "PortRcvPkts":
		return uint64(pc.PortRcvPkts), true
	case "PortXmitWait":
		return uint64(pc.PortXmitWait), true
	}
	return 0, false
}

// Bits is the width of PortCounters counter name (IBA 16.1.3.5), 0 for
// a name that is not one; a switch, so that judging every port of a
// big fabric looks up no description.
func Bits(name string) int {
	switch name {
	case "LocalLinkIntegrityErrors", "ExcessiveBufferOverrunErrors":
		return 4
	case "LinkErrorRecoveryCounter", "LinkDownedCounter", "PortXmitConstraintErrors", "PortRcvConstraintErrors":
		return 8
	case "SymbolErrorCounter", "PortRcvErrors", "PortRcvRemotePhysicalErrors", "PortRcvSwitchRelayErrors",
		"PortXmitDiscards", "QP1Dropped", "VL15Dropped":
		return 16
	case "PortXmitData", "PortRcvData", "PortXmitPkts", "PortRcvPkts", "PortXmitWait":
		return 32
	}
	return 0
}

// ExtValue is Value of PortCountersExtended's 64-bit counters.
func ExtValue(pc *mad.PortCountersExtended, name string) (v uint64, ok bool) {
	switch name {
	case "SymbolErrorCounter":
		return pc.SymbolErrorCounter, true
	case "LinkErrorRecoveryCounter":
		return pc.LinkErrorRecoveryCounter, true
	case "LinkDownedCounter":
		return pc.LinkDownedCounter, true
	case "PortRcvErrors":
		return pc.PortRcvErrors, true
	case "PortRcvRemotePhysicalErrors":
		return pc.PortRcvRemotePhysicalErrors, true
	case "PortRcvSwitchRelayErrors":
		return pc.PortRcvSwitchRelayErrors, true
	case "PortXmitDiscards":
		return pc.PortXmitDiscards, true
	case "PortXmitConstraintErrors":
		return pc.PortXmitConstraintErrors, true
	case "PortRcvConstraintErrors":
		return pc.PortRcvConstraintErrors, true
	case "LocalLinkIntegrityErrors":
		return pc.LocalLinkIntegrityErrors, true
	case "ExcessiveBufferOverrunErrors":
		return pc.ExcessiveBufferOverrunErrors, true
	case "QP1Dropped":
		return pc.QP1Dropped, true
	case "VL15Dropped":
		return pc.VL15Dropped, true
	case "PortXmitData":
		return pc.PortXmitData, true
	case "PortRcvData":
		return pc.PortRcvData, true
	case "PortXmitPkts":
		return pc.PortXmitPkts, true
	case "PortRcvPkts":
		return pc.PortRcvPkts, true
	case "PortXmitWait":
		return pc.PortXmitWait, true
	}
	return 0, false
}
