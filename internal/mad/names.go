package mad

import (
	"fmt"
	"strconv"
	"strings"
)

// InitialPath returns the initial path of a DR SMP: the local port 0
// followed by one egress port per hop.
func (h Header) InitialPath() []byte {
	return h[offInitialPath : offInitialPath+int(h.HopCount())+1]
}

// FormatDRPath renders a DR path as infiniband-diags writes it: "0,1,3".
func FormatDRPath(path []byte) string {
	parts := make([]string, len(path))
	for i, p := range path {
		parts[i] = strconv.Itoa(int(p))
	}
	return strings.Join(parts, ",")
}

// MethodName names a method the way IBA and python-rdma do: the class's
// prefix (Subn, SubnAdm, Performance, ...) and the method.
func MethodName(class, method uint8) string {
	prefix := map[uint8]string{
		ClassSubnLID: "Subn", ClassSubnDR: "Subn", ClassSubnAdm: "SubnAdm",
		ClassPerf: "Performance", ClassCongest: "CongestionControl",
	}[class]
	if prefix == "" {
		prefix = fmt.Sprintf("Class0x%02x", class)
	}
	name := map[uint8]string{
		MethodGet: "Get", MethodSet: "Set", MethodGetResp: "GetResp", MethodSend: "Send",
		MethodTrap: "Trap", MethodReport: "Report", MethodReportResp: "ReportResp",
		MethodTrapRepres: "TrapRepress", MethodGetTable: "GetTable", MethodGetTblResp: "GetTableResp",
	}[method]
	if name == "" {
		name = fmt.Sprintf("Method0x%02x", method)
	}
	return prefix + name
}

// AttrName names an attribute of a class from the wire description, or
// gives its number.
func AttrName(class uint8, id uint16) string {
	if d := LookupAttr(class, id); d != nil {
		return d.Name
	}
	return fmt.Sprintf("0x%04x", id)
}

// StatusText explains a MAD status word (IBA 13.4.7, Table 111; the SA's
// class-specific codes from IBA 15.2.1.1, Table 196).
func StatusText(class uint8, status uint16) string {
	var parts []string
	if status&0x0001 != 0 {
		parts = append(parts, "busy")
	}
	if status&0x0002 != 0 {
		parts = append(parts, "redirect required")
	}
	switch (status >> 2) & 0x7 {
	case 1:
		parts = append(parts, "bad base or class version")
	case 2:
		parts = append(parts, "method not supported")
	case 3:
		parts = append(parts, "method/attribute combination not supported")
	case 7:
		parts = append(parts, "invalid attribute or attribute modifier")
	case 4, 5, 6:
		parts = append(parts, fmt.Sprintf("reserved code %d", (status>>2)&0x7))
	}
	if class == ClassSubnAdm {
		if code := (status >> 8) & 0x7F; int(code) < len(saStatusText) && saStatusText[code] != "" {
			parts = append(parts, saStatusText[code])
		}
	} else if cs := status & 0x7F00; cs != 0 && class != ClassSubnDR {
		parts = append(parts, fmt.Sprintf("class-specific 0x%02x", cs>>8))
	}
	if len(parts) == 0 {
		return "success"
	}
	return strings.Join(parts, ", ")
}

// saStatusText are the SA's status codes (IBA 15.2.1.1) by code, "" for
// none: an array, laid out by the linker, not a map built at start.
var saStatusText = [...]string{
	1: "ERR_NO_RESOURCES", 2: "ERR_REQ_INVALID", 3: "ERR_NO_RECORDS",
	4: "ERR_TOO_MANY_RECORDS", 5: "ERR_REQ_INVALID_GID", 6: "ERR_REQ_INSUFFICIENT_COMPONENTS",
	7: "ERR_REQ_DENIED",
}
