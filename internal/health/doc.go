// Package health judges ports, nodes and links, and says what it found
// as records, never as text: the port checks (state, width, speed, LID,
// SM) and the node check against the SA that python-rdma's ibcheck family
// runs, which ports of a fabric they look at, and whether a link runs
// below what both its ends can do (CompareLink), the one judgement of it
// that iblinkinfo, ibportstate, the ibcheck family and the diagnosis
// share. The commands turn the records into their tools' texts.
package health
