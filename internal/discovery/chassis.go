package discovery

import (
	"strconv"
	"strings"

	"github.com/ibtool/ibtool/internal/mad"
)

// Chassis grouping, as libibnetdisc's group_nodes does it (chassis.c,
// infiniband-diags 44): Voltaire ISR chassis recognised by their chips'
// device IDs and internal wiring, Mellanox IS4 chassis by node description
// ("MF0;<system>:<type>/<slot>[:<board>]/U<chip>"), everything else
// grouped by system image GUID. ibnetdiscover -g prints the result; the
// external port numbers it assigns go into the cache file too.

// Vendor and device IDs the grouping knows (libibnetdisc chassis.h).
const (
	vendorVoltaire = 0x8f1
	vendorMellanox = 0x2c9
	vendorTopspin  = 0x5ad
	vendorInfinCon = 0x66a
	vendorXsigo    = 0x1397

	devVtrFCRouter = 0x5a00
	devVtrIPRouter = 0x5a01
	devVtrSLB24    = 0x5a09
	devVtrSFB12    = 0x5a08
	devVtrSFB4     = 0x5a0b
	devVtrSLB8     = 0x5a0d
	devVtrSFB12DDR = 0x5a32
	devVtrSFB4DDR  = 0x5a33
	devVtrSLB24DDR = 0x5a34
	devVtrSFB2012  = 0x5a37
	devVtrSLB2024  = 0x5a38
	devVtrSFB2004  = 0x5a40
	devVtrSRB2004  = 0x5a42
	devVtrSLB4018  = 0x5a5b
	devVtrSFB4700  = 0x5a5c
	devVtrSFB4700x = 0x5a5d
	devVtrSFB4200  = 0x5a60
	devMlxIS4      = 0xbd36
)

// SpinesMax and LinesMax are the slots of a chassis.
const (
	SpinesMax = 18
	LinesMax  = 36
)

// Chassis types and slot types (libibnetdisc's enums).
const (
	chUnresolved = iota
	chISR9288
	chISR9096
	chISR2012
	chISR2004
	chISR4700
	chISR4200
)

const (
	slotUnresolved = iota
	slotLine
	slotSpine
	slotSRBD
)

var chassisTypeNames = []string{"", "ISR9288", "ISR9096", "ISR2012", "ISR2004", "ISR4700", "ISR4200"}
var chassisSlotNames = []string{"", "Line", "Spine", "SRBD"}

// Chassis is one chassis (or system image GUID group) of a fabric.
type Chassis struct {
	// Num numbers the chassis from 1; 0 means the group is not shown as a
	// chassis (a single node).
	Num  int
	GUID uint64
	// Nodes are the grouped nodes that are not Voltaire or Mellanox
	// line/spine chips, in libibnetdisc's list order.
	Nodes []*Node
	// Spines and Lines are the chips by slot index (1-based).
	Spines [SpinesMax + 1]*Node
	Lines  [LinesMax + 1]*Node

	nodeCount uint8 // libibnetdisc counts in an unsigned char
}

// ChassisInfo is what grouping found about one node.
type ChassisInfo struct {
	Chassis  *Chassis // nil if none
	Type     int      // Voltaire chassis type (ch_type)
	TypeStr  string   // Mellanox system type from the description
	AnafaNum int      // chip number
	SlotNum  int
	Slot     int // 1 line, 2 spine, 3 SRBD
	found    bool
}

// Grouping is the result of GroupNodes.
type Grouping struct {
	// Chassis in libibnetdisc's order (the order they were found).
	Chassis []*Chassis
	info    map[*Node]*ChassisInfo
	byGUID  map[uint64]*Chassis // the first chassis of each GUID
	// listed mimics libibnetdisc looking chassis up in fabric->chassis,
	// which is set only when the first GUID group is added.
	listed bool
}

// Info returns what grouping found about n (a zero value if nothing).
func (g *Grouping) Info(n *Node) *ChassisInfo {
	if ci := g.info[n]; ci != nil {
		return ci
	}
	ci := &ChassisInfo{}
	g.info[n] = ci
	return ci
}

// lookup is Info without recording n: the printers read a grouping from
// several goroutines at once.
func (g *Grouping) lookup(n *Node) *ChassisInfo {
	if ci := g.info[n]; ci != nil {
		return ci
	}
	return &ChassisInfo{}
}

// ChassisNum is the number of n's chassis, 0 if none.
func (g *Grouping) ChassisNum(n *Node) int {
	if ch := g.lookup(n).Chassis; ch != nil {
		return ch.Num
	}
	return 0
}

// ChassisGUID is ibnd_get_chassis_guid: the GUID of chassis num.
func (g *Grouping) ChassisGUID(num int) uint64 {
	for _, ch := range g.Chassis {
		if ch.Num == num {
			return ch.GUID
		}
	}
	return 0
}

// TypeName is ibnd_get_chassis_type: "" when there is none to show.
func (g *Grouping) TypeName(n *Node) string {
	ci := g.lookup(n)
	if ci.Chassis == nil {
		return ""
	}
	switch nodeVendor(n) {
	case vendorVoltaire:
		if ci.Type == chUnresolved || ci.Type > chISR4200 {
			return ""
		}
		return chassisTypeNames[ci.Type]
	case vendorMellanox:
		return ci.TypeStr
	}
	return ""
}

// SlotString is ibnd_get_chassis_slot_str, e.g. "Line 3 Chip 1"; "" when
// there is none.
func (g *Grouping) SlotString(n *Node) string {
	v := nodeVendor(n)
	if v != vendorVoltaire && v != vendorMellanox {
		return ""
	}
	ci := g.lookup(n)
	if ci.Chassis == nil || ci.Slot == slotUnresolved || ci.Slot > slotSRBD {
		return ""
	}
	return chassisSlotNames[ci.Slot] + " " + itoa(ci.SlotNum) + " Chip " + itoa(ci.AnafaNum)
}

func itoa(v int) string {
	if v == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	neg := v < 0
	if neg {
		v = -v
	}
	for v > 0 {
		i--
		b[i] = byte('0' + v%10)
		v /= 10
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}

// nodeVendor and nodeDevID decode n's NodeInfo on the stack: grouping
// asks a few times per node, and Node.Info's copy on the heap was most of
// GroupNodes' allocations.
func nodeVendor(n *Node) uint32 {
	var ni mad.NodeInfo
	_ = ni.Unmarshal(n.NodeInfo)
	return ni.VendorID
}

func nodeDevID(n *Node) uint16 {
	var ni mad.NodeInfo
	_ = ni.Unmarshal(n.NodeInfo)
	return ni.DeviceID
}

// Xsigo GUID tests (libibnetdisc exports them; ibnetdiscover -g uses them).
func IsXsigoGUID(g uint64) bool    { return g&0xffffff0000000000 == 0x0013970000000000 }
func isXsigoLeafOne(g uint64) bool { return g&0xffffffffff000000 == 0x0013970102000000 }
func IsXsigoHCA(g uint64) bool     { return g&0xffffffff00000000 == 0x0013970200000000 }
func IsXsigoTCA(g uint64) bool     { return g&0xffffffff00000000 == 0x0013970300000000 }
func isXsigoSwitch(g uint64) bool  { return g&0xffffffff00000000 == 0x0013970100000000 }

func devIs(n *Node, ids ...uint16) bool {
	d := nodeDevID(n)
	for _, id := range ids {
		if d == id {
			return true
		}
	}
	return false
}

func isRouterChip(n *Node) bool { return devIs(n, devVtrFCRouter, devVtrIPRouter) }
func isSpine9096(n *Node) bool  { return devIs(n, devVtrSFB4, devVtrSFB4DDR) }
func isSpine9288(n *Node) bool  { return devIs(n, devVtrSFB12, devVtrSFB12DDR) }
func isSpine2004(n *Node) bool  { return devIs(n, devVtrSFB2004) }
func isSpine2012(n *Node) bool  { return devIs(n, devVtrSFB2012) }
func isSpine4700(n *Node) bool  { return devIs(n, devVtrSFB4700) }
func isSpine4700x2(n *Node) bool {
	return devIs(n, devVtrSFB4700x)
}
func isSpine4200(n *Node) bool { return devIs(n, devVtrSFB4200) }
func isSpine(n *Node) bool {
	return isSpine9096(n) || isSpine9288(n) || isSpine2004(n) || isSpine2012(n) ||
		isSpine4700(n) || isSpine4700x2(n) || isSpine4200(n)
}
func isLine24(n *Node) bool   { return devIs(n, devVtrSLB24, devVtrSLB24DDR, devVtrSRB2004) }
func isLine8(n *Node) bool    { return devIs(n, devVtrSLB8) }
func isLine2024(n *Node) bool { return devIs(n, devVtrSLB2024) }
func isLine4700(n *Node) bool { return devIs(n, devVtrSLB4018) }
func isLine(n *Node) bool     { return isLine24(n) || isLine8(n) || isLine2024(n) || isLine4700(n) }

// Slot tables, indexed by the port number on the other chip
// (libibnetdisc's tables, for ports 0..36; entries past the listed ones
// are 0). Strings that at reads, where tables parsed into slices cost
// every start of the program their parsing, for a grouping few runs do.
const (
	lineSlotSFB4      = "0 1 1 1 1 1 1 2 2 2 2 2 2 3 3 3 3 3 3 4 4 4 4 4 4"
	anafaLineSFB4     = "0 1 1 1 2 2 2 1 1 1 2 2 2 1 1 1 2 2 2 1 1 1 2 2 2"
	lineSlotSFB12     = "0 1 1 2 2 3 3 4 4 5 5 6 6 7 7 8 8 9 9 10 10 11 11 12 12"
	anafaLineSFB12    = "0 1 2 1 2 1 2 1 2 1 2 1 2 1 2 1 2 1 2 1 2 1 2 1 2"
	lineSlotSFB18     = "0 1 1 2 2 3 3 4 4 5 5 6 6 7 7 8 8 9 9 10 10 11 11 12 12 13 13 14 14 15 15 16 16 17 17 18 18"
	anafaLineSFB18    = "0 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1"
	lineSlotSFB18x2   = "0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18"
	anafaLineSFB18x2  = "0 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1"
	lineSlotSFB4200   = "0 1 1 1 1 2 2 2 2 3 3 3 3 4 4 4 4 5 5 5 5 6 6 6 6 7 7 7 7 8 8 8 8 9 9 9 9"
	anafaLineSFB4200  = "0 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1"
	iprSlotSFB4Port   = "0 3 2 1 3 2 1 3 2 1 3 2 1 3 2 1 3 2 1 3 2 1 3 2 1"
	spine12SlotSLB    = "0 1 1 1 2 2 2 3 3 3 4 4 4"
	anafaSpine12SLB   = "0 1 2 3 1 2 3 1 2 3 1 2 3"
	spine4SlotSLB     = "0 1 1 1 2 2 2 3 3 3 4 4 4"
	anafaSpine4SLB    = "0 1 1 1 1 1 1 1 1 1 1 1 1"
	spine18SlotSLB    = "0 1 1 2 2 3 3 4 4 5 5 6 6 7 7 8 8 9 9"
	anafaSpine18SLB   = "0 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1"
	anafaSpine18x2SLB = "0 2 1 2 1 2 1 2 1 2 1 2 1 2 1 2 1 2 1"
	sfb4200SlotSLB    = "0 1 1 1 1 0 0 2 2 2 2 3 3 3 3 4 4 4 4"
	anafaSFB4200SLB   = "0 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1"
	int2extSLB4018    = "0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18"
)

// The external port numbers of the two chips of a line board.
var (
	int2extSLB24     = [2]string{"0 0 0 0 0 0 0 0 0 0 0 0 0 6 5 4 18 17 16 1 2 3 13 14 15", "0 0 0 0 0 0 0 0 0 0 0 0 0 12 11 10 24 23 22 7 8 9 19 20 21"}
	int2extSLB8      = [2]string{"0 0 0 0 0 0 0 0 0 0 0 0 0 2 2 2 6 6 6 1 1 1 5 5 5", "0 0 0 0 0 0 0 0 0 0 0 0 0 4 4 4 8 8 8 3 3 3 7 7 7"}
	int2extSLB2024   = [2]string{"0 0 0 0 0 0 0 0 0 0 0 0 0 13 14 15 16 17 18 19 20 21 22 23 24", "0 0 0 0 0 0 0 0 0 0 0 0 0 1 2 3 4 5 6 7 8 9 10 11 12"}
	int2extSFB4700x2 = [2]string{"0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 7 7 7 8 8 8 9 9 9 10 10 10 11 11 11 12 12 12", "0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 1 1 1 2 2 2 3 3 3 4 4 4 5 5 5 6 6 6"}
)

// at reads entry i of a table; ports past its entries, or out of range,
// read 0 (libibnetdisc would read past its array).
func at(t string, i int) int {
	if i < 0 {
		return 0
	}
	for f := range strings.FieldsSeq(t) {
		if i == 0 {
			n, _ := strconv.Atoi(f)
			return n
		}
		i--
	}
	return 0
}

// GroupNodes groups f's nodes into chassis as libibnetdisc does after
// every discovery and cache load, sets the external port numbers it
// derives (Port.ExtNum) and returns the grouping, which f keeps (Chassis).
func GroupNodes(f *Fabric) *Grouping {
	f.chassis = groupNodes(f)
	return f.chassis
}

// Chassis is f's chassis grouping: the one GroupNodes made last, as
// libibnetdisc keeps it with its fabric, or a new one when f was not
// grouped since its last node came (a walk with NoChassis). Printing a
// big fabric's topology grouped it a second time (6-10 ms on 2000 nodes).
func (f *Fabric) Chassis() *Grouping {
	if f.chassis == nil {
		GroupNodes(f)
	}
	return f.chassis
}

func groupNodes(f *Fabric) *Grouping {
	// A chassis GUID per node at most (most nodes are a chassis of their own).
	g := &Grouping{info: make(map[*Node]*ChassisInfo, len(f.Nodes)), byGUID: make(map[uint64]*Chassis, len(f.Nodes))}
	switches := reversed(f.NodesOfType(NodeSwitch)) // libibnetdisc's lists run newest first
	nodes := reversed(f.Nodes)

	for _, n := range switches {
		switch nodeVendor(n) {
		case vendorVoltaire:
			g.fillVoltaire(n)
		case vendorMellanox:
			g.fillMellanox(n)
		}
	}

	var num uint8
	for _, n := range switches {
		if nodeVendor(n) != vendorVoltaire {
			continue
		}
		ci := g.Info(n)
		if !ci.found || (ci.Chassis != nil && ci.Chassis.Num != 0) || !isSpine(n) {
			continue
		}
		ch := &Chassis{}
		g.Chassis = append(g.Chassis, ch) // indexed once built: its GUID comes last
		num++
		ch.Num = int(num)
		if !g.buildChassis(n, ch) {
			return g.failed()
		}
	}

	for _, ch := range g.Chassis {
		g.index(ch)
	}
	for _, n := range nodes {
		if nodeVendor(n) == vendorVoltaire || n.SystemImageGUID() == 0 {
			continue
		}
		if ch := g.findByGUID(n); ch != nil {
			ch.nodeCount++
		} else {
			g.addChassis(&Chassis{GUID: chassisGUIDOf(n), nodeCount: 1})
			g.listed = true
		}
	}

	for _, n := range nodes {
		v := nodeVendor(n)
		if v == vendorVoltaire || n.SystemImageGUID() == 0 {
			continue
		}
		ch := g.findByGUID(n)
		if ch == nil || ch.nodeCount <= 1 {
			continue
		}
		if ch.Num == 0 {
			num++
			ch.Num = int(num)
		}
		ci := g.Info(n)
		if !ci.found {
			ci.found = true
			ci.Chassis = ch
			ch.Nodes = append([]*Node{n}, ch.Nodes...)
		} else if v == vendorMellanox {
			g.insertMellanox(n, ch)
		}
	}
	return g
}

func reversed(ns []*Node) []*Node {
	out := make([]*Node, len(ns))
	for i, n := range ns {
		out[len(ns)-1-i] = n
	}
	return out
}

// failed is libibnetdisc's cleanup after an internal error: no chassis.
func (g *Grouping) failed() *Grouping {
	g.Chassis = nil
	for _, ci := range g.info {
		ci.Chassis = nil
	}
	return g
}

// addChassis appends a chassis to the list and to the GUID index, where
// the first chassis of a GUID is the one a lookup finds, as in the list.
func (g *Grouping) addChassis(ch *Chassis) {
	g.Chassis = append(g.Chassis, ch)
	g.index(ch)
}

func (g *Grouping) index(ch *Chassis) {
	if _, ok := g.byGUID[ch.GUID]; !ok {
		g.byGUID[ch.GUID] = ch
	}
}

// findByGUID is find_chassisguid: the first chassis with n's chassis GUID.
func (g *Grouping) findByGUID(n *Node) *Chassis {
	if !g.listed {
		return nil
	}
	return g.byGUID[chassisGUIDOf(n)]
}

// chassisGUIDOf is libibnetdisc's get_chassisguid.
func chassisGUIDOf(n *Node) uint64 {
	sys := n.SystemImageGUID()
	switch v := nodeVendor(n); {
	case v == vendorTopspin || v == vendorInfinCon:
		return sys & 0xffffffff00ffffff // byte 4 is the slot
	case v == vendorXsigo || IsXsigoGUID(sys):
		return xsigoChassisGUID(n)
	}
	return sys
}

func xsigoChassisGUID(n *Node) uint64 {
	sys := n.SystemImageGUID()
	if !IsXsigoHCA(sys) && !IsXsigoTCA(sys) {
		if isXsigoSwitch(sys) {
			return sys & 0xffffffff00ffffff
		}
		return sys
	}
	p := n.Port(1)
	if p == nil {
		return 0
	}
	if p.Remote == nil {
		return sys
	}
	if rs := p.Remote.Node.SystemImageGUID(); isXsigoLeafOne(rs) {
		return rs & 0xffffffff00ffffff
	}
	return sys
}

func (g *Grouping) fillVoltaire(n *Node) {
	ci := g.Info(n)
	if ci.found {
		return
	}
	ci.found = true
	switch {
	case isRouterChip(n):
		for p := 1; p <= n.NumPorts; p++ {
			if port := n.Port(p); port != nil && port.Remote != nil && isSpine(port.Remote.Node) {
				g.routerSlot(n, port.Remote)
			}
		}
	case isSpine(n):
		x2 := isSpine4700x2(n)
		for p := 1; p <= n.NumPorts; p++ {
			port := n.Port(p)
			if port == nil || port.Remote == nil || (x2 && port.Num > 18) {
				continue
			}
			rem := port.Remote.Node
			if rem.Type != NodeSwitch {
				if !g.Info(rem).found {
					g.routerSlot(rem, port)
				}
				continue
			}
			if ci.Type == chUnresolved {
				g.spineSlot(n, port.Remote)
			}
		}
	case isLine(n):
		l4700 := isLine4700(n)
		for p := 1; p <= n.NumPorts; p++ {
			port := n.Port(p)
			if port == nil || port.Remote == nil || (l4700 && port.Num > 18) || (!l4700 && port.Num > 12) {
				continue
			}
			g.lineSlot(n, port.Remote)
			break
		}
	}
	for p := 1; p <= n.NumPorts; p++ {
		if port := n.Port(p); port != nil {
			g.voltairePortMap(port)
		}
	}
}

// spineSlot is get_sfb_slot: n is a spine, lineport the line chip's port
// it is wired to.
func (g *Grouping) spineSlot(n *Node, lineport *Port) {
	ci := g.Info(n)
	ci.Slot = slotSpine
	lp := lineport.Num
	switch {
	case isSpine9096(n):
		ci.Type, ci.SlotNum, ci.AnafaNum = chISR9096, at(spine4SlotSLB, lp), at(anafaSpine4SLB, lp)
	case isSpine9288(n):
		ci.Type, ci.SlotNum, ci.AnafaNum = chISR9288, at(spine12SlotSLB, lp), at(anafaSpine12SLB, lp)
	case isSpine2012(n):
		ci.Type, ci.SlotNum, ci.AnafaNum = chISR2012, at(spine12SlotSLB, lp), at(anafaSpine12SLB, lp)
	case isSpine2004(n):
		ci.Type, ci.SlotNum, ci.AnafaNum = chISR2004, at(spine4SlotSLB, lp), at(anafaSpine4SLB, lp)
	case isSpine4700(n):
		ci.Type, ci.SlotNum, ci.AnafaNum = chISR4700, at(spine18SlotSLB, lp), at(anafaSpine18SLB, lp)
	case isSpine4700x2(n):
		ci.Type, ci.SlotNum, ci.AnafaNum = chISR4700, at(spine18SlotSLB, lp), at(anafaSpine18x2SLB, lp)
	case isSpine4200(n):
		ci.Type, ci.SlotNum, ci.AnafaNum = chISR4200, at(sfb4200SlotSLB, lp), at(anafaSFB4200SLB, lp)
	}
}

// routerSlot is get_router_slot.
func (g *Grouping) routerSlot(n *Node, spineport *Port) {
	ci := g.Info(n)
	ci.found = true
	ci.Slot = slotSRBD
	sp, sn := spineport.Num, spineport.Node
	guess := func() int {
		switch sn.GUID % 4 { // which module of an sFB-12, from the GUID order
		case 3:
			return 1
		case 1:
			return 3
		}
		return 2
	}
	switch {
	case isSpine9096(sn):
		ci.Type, ci.SlotNum, ci.AnafaNum = chISR9096, at(lineSlotSFB4, sp), at(iprSlotSFB4Port, sp)
	case isSpine9288(sn):
		ci.Type, ci.SlotNum, ci.AnafaNum = chISR9288, at(lineSlotSFB12, sp), guess()
	case isSpine2012(sn):
		ci.Type, ci.SlotNum, ci.AnafaNum = chISR2012, at(lineSlotSFB12, sp), guess()
	case isSpine2004(sn):
		ci.Type, ci.SlotNum, ci.AnafaNum = chISR2004, at(lineSlotSFB4, sp), at(iprSlotSFB4Port, sp)
	}
}

// lineSlot is get_slb_slot.
func (g *Grouping) lineSlot(n *Node, spineport *Port) {
	ci := g.Info(n)
	ci.Slot = slotLine
	sp, sn := spineport.Num, spineport.Node
	switch {
	case isSpine9096(sn):
		ci.Type, ci.SlotNum, ci.AnafaNum = chISR9096, at(lineSlotSFB4, sp), at(anafaLineSFB4, sp)
	case isSpine9288(sn):
		ci.Type, ci.SlotNum, ci.AnafaNum = chISR9288, at(lineSlotSFB12, sp), at(anafaLineSFB12, sp)
	case isSpine2012(sn):
		ci.Type, ci.SlotNum, ci.AnafaNum = chISR2012, at(lineSlotSFB12, sp), at(anafaLineSFB12, sp)
	case isSpine2004(sn):
		ci.Type, ci.SlotNum, ci.AnafaNum = chISR2004, at(lineSlotSFB4, sp), at(anafaLineSFB4, sp)
	case isSpine4700(sn):
		ci.Type, ci.SlotNum, ci.AnafaNum = chISR4700, at(lineSlotSFB18, sp), at(anafaLineSFB18, sp)
	case isSpine4700x2(sn):
		ci.Type, ci.SlotNum, ci.AnafaNum = chISR4700, at(lineSlotSFB18x2, sp), at(anafaLineSFB18x2, sp)
	case isSpine4200(sn):
		ci.Type, ci.SlotNum, ci.AnafaNum = chISR4200, at(lineSlotSFB4200, sp), at(anafaLineSFB4200, sp)
	}
}

// fillMellanox is fill_mellanox_chassis_record: an IS4 chip whose
// description reads "MF0;<system>:<type>/<slot>[:<board>]/U<chip>".
func (g *Grouping) fillMellanox(n *Node) {
	ci := g.Info(n)
	if ci.found || nodeDevID(n) != devMlxIS4 {
		return
	}
	desc := make([]byte, 64)
	copy(desc, n.NodeDesc)
	if i := indexByte(desc, 0); i >= 0 {
		desc = desc[:i]
	}
	if len(desc) < 4 || string(desc[:4]) != "MF0;" {
		return
	}
	rest := desc[4:]
	i := indexByte(rest, ':') // after the system name
	if i < 0 {
		return
	}
	rest = rest[i+1:]
	i = indexByte(rest, '/')
	if i < 0 {
		return
	}
	sysType := rest[:i]
	rest = rest[i+1:]
	i = indexAny(rest, "/:")
	if i < 0 {
		return
	}
	slotName := rest[:i]
	if rest[i] == ':' {
		rest = rest[i+1:]
		if i = indexByte(rest, '/'); i < 0 {
			return
		}
	}
	index := rest[i+1:]
	if len(index) == 0 || index[0] != 'U' {
		return
	}
	ci.AnafaNum = int(uint8(atoi(index[1:])))
	switch {
	case len(slotName) > 0 && slotName[0] == 'L':
		ci.Slot = slotLine
	case len(slotName) > 0 && slotName[0] == 'S':
		ci.Slot = slotSpine
	default:
		return
	}
	ci.found = true
	var num []byte
	if len(slotName) > 1 {
		num = slotName[1:]
	}
	ci.SlotNum = int(uint8(atoi(num)))
	if (ci.Slot == slotLine && ci.SlotNum > LinesMax+1) || (ci.Slot == slotSpine && ci.SlotNum > SpinesMax+1) {
		ci.SlotNum = 0
		return
	}
	if len(sysType) > 19 {
		sysType = sysType[:19]
	}
	ci.TypeStr = string(sysType)
	if ci.Slot == slotLine {
		for p := 1; p <= n.NumPorts && p <= 18; p++ {
			if port := n.Port(p); port != nil {
				port.ExtNum = p
			}
		}
	}
}

func indexByte(b []byte, c byte) int {
	for i, x := range b {
		if x == c {
			return i
		}
	}
	return -1
}

func indexAny(b []byte, cs string) int {
	for i, x := range b {
		for j := 0; j < len(cs); j++ {
			if x == cs[j] {
				return i
			}
		}
	}
	return -1
}

// atoi is C's atoi: leading blanks, a sign, digits.
func atoi(b []byte) int {
	i := 0
	for i < len(b) && (b[i] == ' ' || (b[i] >= '\t' && b[i] <= '\r')) {
		i++
	}
	neg := false
	if i < len(b) && (b[i] == '+' || b[i] == '-') {
		neg = b[i] == '-'
		i++
	}
	v := 0
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		v = v*10 + int(b[i]-'0')
		if v > 1<<31 {
			v = 1 << 31
		}
	}
	if neg {
		v = -v
	}
	return v
}

func (g *Grouping) insertMellanox(n *Node, ch *Chassis) {
	ci := g.Info(n)
	switch ci.Slot {
	case slotLine:
		if ci.SlotNum >= len(ch.Lines) || ch.Lines[ci.SlotNum] != nil {
			return
		}
		ch.Lines[ci.SlotNum] = n
	case slotSpine:
		if ci.SlotNum >= len(ch.Spines) || ch.Spines[ci.SlotNum] != nil {
			return
		}
		ch.Spines[ci.SlotNum] = n
	default:
		return
	}
	ci.Chassis = ch
}

func (g *Grouping) lineIndex(n *Node) int {
	ci := g.Info(n)
	i := 3*(ci.SlotNum-1) + ci.AnafaNum
	if isLine4700(n) {
		i = ci.SlotNum
	}
	if i > LinesMax || i < 1 {
		return -1
	}
	return i
}

func (g *Grouping) spineIndex(n *Node) int {
	ci := g.Info(n)
	i := ci.SlotNum
	switch {
	case isSpine9288(n) || isSpine2012(n):
		i = 3*(ci.SlotNum-1) + ci.AnafaNum
	case isSpine4700(n) || isSpine4700x2(n):
		i = 2*(ci.SlotNum-1) + ci.AnafaNum
	}
	if i > SpinesMax || i < 1 {
		return -1
	}
	return i
}

func (g *Grouping) insertLineRouter(n *Node, ch *Chassis) bool {
	i := g.lineIndex(n)
	if i < 0 {
		return false
	}
	if ch.Lines[i] == nil {
		ch.Lines[i] = n
		g.Info(n).Chassis = ch
	}
	return true
}

func (g *Grouping) insertSpine(n *Node, ch *Chassis) bool {
	i := g.spineIndex(n)
	if i < 0 {
		return false
	}
	if ch.Spines[i] == nil {
		ch.Spines[i] = n
		g.Info(n).Chassis = ch
	}
	return true
}

func (g *Grouping) linesCatchSpines(ch *Chassis) bool {
	for i := 1; i <= LinesMax; i++ {
		n := ch.Lines[i]
		if n == nil || !isLine(n) {
			continue
		}
		l4700 := isLine4700(n)
		for p := 1; p <= n.NumPorts; p++ {
			port := n.Port(p)
			if port == nil || port.Remote == nil || (l4700 && port.Num > 18) || (!l4700 && port.Num > 12) {
				continue
			}
			rem := port.Remote.Node
			if !g.Info(rem).found {
				continue
			}
			if !g.insertSpine(rem, ch) {
				return false
			}
		}
	}
	return true
}

func (g *Grouping) spinesCatchLines(ch *Chassis) bool {
	for i := 1; i <= SpinesMax; i++ {
		n := ch.Spines[i]
		if n == nil {
			continue
		}
		x2 := isSpine4700x2(n)
		for p := 1; p <= n.NumPorts; p++ {
			port := n.Port(p)
			if port == nil || port.Remote == nil || (x2 && port.Num > 18) {
				continue
			}
			rem := port.Remote.Node
			if !g.Info(rem).found {
				continue
			}
			if !g.insertLineRouter(rem, ch) {
				return false
			}
		}
	}
	return true
}

// buildChassis is build_chassis: everything around spine chip n.
func (g *Grouping) buildChassis(n *Node, ch *Chassis) bool {
	if !g.insertSpine(n, ch) {
		return false
	}
	x2 := isSpine4700x2(n)
	for p := 1; p <= n.NumPorts; p++ {
		port := n.Port(p)
		if port == nil || port.Remote == nil || (x2 && port.Num > 18) {
			continue
		}
		if rem := port.Remote.Node; g.Info(rem).found {
			g.insertLineRouter(rem, ch) // libibnetdisc ignores a failure here
		}
	}
	if !g.linesCatchSpines(ch) || !g.spinesCatchLines(ch) || !g.linesCatchSpines(ch) || !g.spinesCatchLines(ch) {
		return false
	}
	for i := 1; i <= SpinesMax; i++ {
		if s := ch.Spines[i]; s != nil {
			ch.GUID = s.GUID - 1 // the first spine's GUID minus one, as the Voltaire SM has it
			break
		}
	}
	return true
}

// voltairePortMap maps an ISR line (or 4700 double-density spine) chip's
// internal port to the chassis' external port number.
func (g *Grouping) voltairePortMap(port *Port) {
	n := port.Node
	ci := g.Info(n)
	l4700, x2 := isLine4700(n), isSpine4700x2(n)
	port.ExtNum = 0
	if !ci.found || (!isLine(n) && !x2) {
		return
	}
	pn := port.Num
	if ((l4700 || x2) && (pn < 19 || pn > 36)) || (!l4700 && !x2 && (pn < 13 || pn > 24)) {
		return
	}
	if ci.AnafaNum < 1 || ci.AnafaNum > 2 {
		return
	}
	chip := ci.AnafaNum - 1
	switch {
	case isLine24(n):
		port.ExtNum = at(int2extSLB24[chip], pn)
	case isLine2024(n):
		port.ExtNum = at(int2extSLB2024[chip], pn)
	case l4700:
		port.ExtNum = at(int2extSLB4018, pn)
	case x2:
		port.ExtNum = at(int2extSFB4700x2[chip], pn)
	default:
		port.ExtNum = at(int2extSLB8[chip], pn)
	}
}
