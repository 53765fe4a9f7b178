package sa

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/rpc"
	"github.com/ibtool/ibtool/internal/umad"
	"github.com/ibtool/ibtool/internal/umad/umadtest"
)

// fakeClient is a client of umadtest's SA (GetTable replies in RMPP
// segments, as a real SA sends them and ibsim cannot), at SM LID 1.
func fakeClient(t *testing.T, s *umadtest.SA, opts ...umadtest.Option) (*Client, *umadtest.Port) {
	t.Helper()
	port := umadtest.NewPort(umadtest.Classes{mad.ClassSubnAdm: s.Answer}.Answer,
		append([]umadtest.Option{umadtest.WithInfo(umad.PortInfo{LID: 5, SMLID: 1})}, opts...)...)
	eng := rpc.New(port, rpc.Options{Timeout: 50 * time.Millisecond, Retries: 5})
	t.Cleanup(func() { eng.Close() })
	c, err := NewFromPort(eng, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	return c, port
}

func nodeRecords(n int) *umadtest.SA {
	s := umadtest.NewSA()
	for i := range n {
		r := &mad.NodeRecord{LID: uint16(i + 1)}
		r.NodeInfo.NodeGUID = mad.GUID(0x1000 + i)
		copy(r.NodeDescription.NodeString[:], "node")
		s.Add(r)
	}
	return s
}

// A table of many MADs comes back whole, in order, through RMPP; Get
// finds one record by the component mask, or says there is none.
func TestClientAgainstAFakeSA(t *testing.T) {
	s := nodeRecords(40) // 40 x 112 bytes: 23 segments
	c, port := fakeClient(t, s)
	ctx := context.Background()
	recs, err := c.GetTable(ctx, mad.AttrNodeRecord, make([]byte, nodeRecordSize), 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 40 {
		t.Fatalf("%d records, want 40", len(recs))
	}
	for i, b := range recs {
		var r mad.NodeRecord
		if err := r.Unmarshal(b); err != nil || r.LID != uint16(i+1) || r.NodeInfo.NodeGUID != mad.GUID(0x1000+i) {
			t.Fatalf("record %d: %+v %v", i, r, err)
		}
	}
	if _, segs := s.Stats(); segs != 23 {
		t.Errorf("%d segments sent, want 23", segs)
	}
	if sent := port.Requests(mad.ClassSubnAdm); len(sent) < 2 || sent[0].Method() != mad.MethodGetTable || sent[0][25] != 0 {
		t.Errorf("the query, then ACKs: %d MADs", len(sent))
	}
	q := &mad.NodeRecord{LID: 7}
	b, err := c.Get(ctx, mad.AttrNodeRecord, mad.Encode(q), mad.MustCompMask(q.Desc(), "LID"))
	if err != nil {
		t.Fatal(err)
	}
	var r mad.NodeRecord
	if _ = r.Unmarshal(b); r.NodeInfo.NodeGUID != 0x1006 {
		t.Errorf("Get LID 7: %+v", r)
	}
	q.LID = 99
	if _, err := c.Get(ctx, mad.AttrNodeRecord, mad.Encode(q), mad.MustCompMask(q.Desc(), "LID")); !errors.Is(err, ErrNoRecords) {
		t.Errorf("Get LID 99: %v", err)
	}
	if recs, err := c.GetTable(ctx, mad.AttrNodeRecord, mad.Encode(q), mad.MustCompMask(q.Desc(), "LID")); err != nil || len(recs) != 0 {
		t.Errorf("GetTable LID 99: %d records, %v", len(recs), err)
	}
}

// Lost and reordered MADs: the engine's retries and RMPP's go-back-N
// still bring the whole table.
func TestClientSurvivesLossAndReordering(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		c, _ := fakeClient(t, nodeRecords(30), umadtest.Loss(0.1), umadtest.Jitter(2*time.Millisecond), umadtest.Seed(seed))
		recs, err := c.GetTable(context.Background(), mad.AttrNodeRecord, make([]byte, nodeRecordSize), 0)
		if err != nil || len(recs) != 30 {
			t.Fatalf("seed %d: %d records, %v", seed, len(recs), err)
		}
	}
}
