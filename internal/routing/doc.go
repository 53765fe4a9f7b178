// Package routing owns the forwarding tables of a fabric's switches and
// what is computed from them: reading them, following routes through
// them, and the fabric-wide analyses of the diagnosis. It sits below the
// commands (ibroute, dump_fts, ibtracert, ibfindnodesusing,
// check_lft_balance) and the diagnosis, on the fabric model of package
// discovery and the query layer; it prints nothing.
//
// # The model
//
// Tables are the tables of a fabric's switches keyed by node GUID,
// together with the discovery.Fabric they belong to. A Switch holds its
// SwitchInfo (IBA 14.2.5.4: LinearFDBTop, MulticastFDBCap and
// MulticastFDBTop say how much of the tables is in use) and the tables
// read:
//
//   - LFT, the LinearForwardingTable (IBA 14.2.5.10): one byte per LID,
//     the port the switch sends it out of (0: the switch itself; NoPort,
//     0xFF: none). A 2,000-node fabric's tables hold 600,000 entries, so
//     an entry is a byte, never a struct. The table covers whole blocks
//     of 64 LIDs; blocks that could not be read are listed in Failed
//     and read as NoPort.
//   - MFT, the MulticastForwardingTable (IBA 14.2.5.12; 14.2.5.11 is the
//     RandomForwardingTable, which this package does not read): for each MLID
//     from 0xC000, its ports as the 16-port masks of the wire.
//   - SL2VL, the SLtoVLMappingTables (IBA 14.2.5.8) of the ports asked
//     for: for an input and an output port, the VL of each SL.
//
// LIDMap says which port holds each LID, as libibnetdisc maps them.
//
// # Reading
//
// Read and ReadSwitches read every switch's LFT (and MFT on request)
// through the query layer's fan-out: every block of every switch in
// flight at once within the engine's windows, only the blocks that
// LinearFDBTop or MulticastFDBCap/Top cover (DefaultBlocks, DefaultMLIDs)
// unless a Target asks for a range. A block that fails is its switch's
// alone. ReadSL2VL reads the tables of given switch ports from every
// input port; the diagnosis asks for those of the ports of the credit
// loops the graph without VLs has, where a port operates more than one
// data VL: VLs can break a loop, never make one.
//
// # Trace
//
// Tables.Trace follows the LFTs from a switch, or from a CA or router
// port over its link, to a LID, and gives the hops (node, in port, out
// port) and how the route ends: it arrives; a switch has no entry; the
// entry names a port the switch does not have; the port is down or
// unlinked; it leads to an end port that is not the destination (or to
// a switch's own port 0); the route comes back to a switch (a loop); or
// it reaches what could not be read. TraceWith follows a route through a
// Forwarder instead, which reads each switch's entry as the route needs
// it (a command that traces one route live). Tables.Multicast follows an MLID's
// entries from a node breadth first: the switches and end ports a copy
// reaches, the copies that come back to a switch already reached (the
// entries do not form a tree), and the ports copies are lost on.
//
// # Reachability
//
// Tables.Reachability follows the LFTs from every switch to every
// destination: every LID of every switch, and of every Active CA and
// router port, every LID of an LMC range. Towards one destination the
// switches' next hops form a functional graph, so each destination is
// resolved in one pass over the switches: a switch's result (arrived in
// so many hops, or where the route ends) is kept and reused by every
// route that reaches it. Findings are per place (a switch that lacks an
// entry is one dead end, with the number of switches whose routes end
// there): dead ends, loops, and detours, the hops that bring a route no
// closer to its destination than it was, against breadth-first hop
// counts over Active links between switches. A route is longer than the
// shortest way exactly when it takes a detour. It also gives a hop-count
// histogram and each switch's routes per port.
//
// # Hosts through a port, and balance
//
// Tables.Through lists the end ports a switch routes out of a port, an
// LMC range named once by its first LID (what ibfindnodesusing answers).
// Tables.Balance counts how many LIDs of CAs and routers a switch sends
// out of each port, and Uneven is check_lft_balance's verdict on such
// counts, with its -e heuristics for line boards and switches not fully
// populated; the script's own quirks (which ports it weighs, how it
// compares names) are its command's.
//
// # Directed routes
//
// DRRoutes, WalkDR and RouteToPort plan the directed routes that the
// commands changing port states send their SMPs by: the shortest route
// from the local node to each node that avoids the links being changed,
// and for a port the route whose last hop is its own link when nothing
// else reaches it.
//
// # Credit loops
//
// Tables.CreditLoops builds the channel dependency graph of the routes
// and reports every cycle in it. A channel is one direction of a link
// between two switches (switch, out port), and one per VL where SL2VL
// tables tell VLs apart. A packet holding a buffer of one channel waits
// for a buffer of the next channel of its route; a cycle of such waits
// can deadlock the switches for want of credits. Channels from and to
// end ports are in no cycle (nothing waits on an injection, an ejection
// waits on nothing) and are left out.
//
// The classic tools find such cycles by depth-first search over the
// graph of every source and destination pair, and stop at the first
// back edge: ibdm (behind ibdmchk) keeps a node per port and VL and
// joins the channels of every path; OpenSM's DFSSSP routing keys
// channels by the LIDs and ports of both link ends, skips the end ports,
// searches each VL's graph and moves the paths of a cycle's weakest edge
// to another VL until none is left. We build the same graph but
// differently, and report all of it. Like ibdm by default, it is the
// graph of the routes to CA and router ports: a switch's LIDs receive
// management traffic only (SMPs on VL15, which has no credits, and few
// GMPs), and the routes between a min-hop fat tree's switches turn down
// and up again: with them, every three-level fat tree OpenSM routes has
// a loop that only packets to switches can close. Because an LFT routes by
// destination only, the dependencies are built once per destination
// rather than per pair: when switch S sends the destination out of port
// o into switch T, and T sends it on out of o2 into another switch,
// (S,o) waits on (T,o2). With SL2VL tables this is done once per class
// of SLs that every table maps alike, the VL out of o being what S's
// table maps the SL to from the port the packet came in by; a packet put
// on VL15 or on a VL its out port does not operate is dropped there and
// waits on nothing. When every table puts each class on one VL
// throughout (a fabric without QoS: SL i on VL i), the classes' graphs
// are one graph on several VLs: it is built once, and each of its loops
// is reported once with the VLs it is on. The strongly
// connected components of the graph (Tarjan's algorithm, iterative, so
// that a big fabric's graph cannot exhaust a stack) that hold a cycle
// are the credit loops, every one of them; each comes with one shortest
// cycle through it as its chain of switch ports.
//
// Tables.Analyze runs Reachability and CreditLoops in one pass over the
// destinations. Both read the tables one LID at a time across all
// switches, for which the entries of each block of 64 LIDs are laid out
// LID-major once; BenchmarkOfflineS10000 measures them on a generated
// model of a 10,242-node fat tree.
package routing
