package umadtest_test

import (
	"fmt"
	"time"

	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/umad"
	"github.com/ibtool/ibtool/internal/umad/umadtest"
)

// A host and a switch, the switch's SMA and a PMA: what a command would
// see through env.Transport.
func Example() {
	fab := umadtest.NewFabric()
	host := fab.AddCA(0x100, 1, "host") // the first node is the local one
	sw := fab.AddSwitch(0x200, 8, "sw")
	fab.Link(host, 1, sw, 3)
	pma := umadtest.NewPMA()
	pma.Set(3, &mad.PortCounters{PortSelect: 3, SymbolErrorCounter: 7})
	tr := umadtest.NewOpener(umadtest.Classes{
		mad.ClassSubnLID: fab.Answer, mad.ClassSubnDR: fab.Answer,
		mad.ClassPerf: pma.Answer,
	}.Answer, umadtest.WithInfo(fab.LocalInfo()))

	port, _ := tr.Open("", -1)
	defer port.Close()
	ask := func(addr umad.Address, req mad.Header) mad.Header {
		_ = port.Send(&umad.Packet{Addr: addr, MAD: req})
		reply, _ := port.Recv(time.Now().Add(time.Second))
		return reply.MAD
	}
	nd := ask(umad.Address{LID: umad.PermissiveLID}, mad.NewDRSMP(mad.MethodGet, mad.AttrNodeDescription, 0, []byte{0, 1}))
	req := mad.NewRequest(mad.ClassPerf, 1, mad.MethodGet, mad.AttrPortCounters, 0)
	req[mad.SMPDataOffset+1] = 3 // PortSelect
	var pc mad.PortCounters
	_ = pc.Unmarshal(ask(umad.Address{LID: sw.LID(0), QP: 1, QKey: umad.QP1QKey}, req)[mad.SMPDataOffset:])

	fmt.Printf("%s at LID %d, port 3 SymbolErrorCounter %d\n", nd.SMPData()[:2], sw.LID(0), pc.SymbolErrorCounter)
	fmt.Println(len(tr.Requests()), "requests,", len(tr.Requests(mad.ClassPerf)), "PerfMgt")
	// Output:
	// sw at LID 2, port 3 SymbolErrorCounter 7
	// 2 requests, 1 PerfMgt
}
