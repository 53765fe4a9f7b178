package sa

import (
	"context"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/ibtool/ibtool/internal/rpc"
	"github.com/ibtool/ibtool/internal/simfabric"
	"github.com/ibtool/ibtool/internal/umad"
)

const (
	attrNodeRecord     = 0x0011
	attrPortInfoRecord = 0x0012
	nodeRecordSize     = 108 // LID, reserved, NodeInfo (40), NodeDescription (64)
	portInfoRecordSize = 68  // EndportLID, PortNum, reserved, PortInfo (64)
)

func simClient(t *testing.T, f *simfabric.Fabric, host string) *Client {
	t.Helper()
	port, err := umad.NewSim(umad.SimConfig{SockName: f.SockName(), Host: host}).Open("", -1)
	if err != nil {
		t.Fatal(err)
	}
	eng := rpc.New(port, rpc.Options{})
	t.Cleanup(func() { eng.Close() })
	c, err := NewFromPort(eng, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestGetTableAndGetAgainstOpenSM(t *testing.T) {
	f := simfabric.StartT(t, "tiny.net")
	c := simClient(t, f, "Hca1")
	ctx := context.Background()

	recs, err := c.GetTable(ctx, attrNodeRecord, make([]byte, nodeRecordSize), 0)
	if err != nil {
		t.Fatal(err)
	}
	// ibsim has no RMPP: one 256-byte MAD holds one complete NodeRecord.
	if len(recs) != 1 || binary.BigEndian.Uint16(recs[0][0:]) == 0 || recs[0][4] != 1 /* NodeInfo.BaseVersion */ {
		t.Fatalf("NodeRecord table: %d records, first % x", len(recs), recs[0][:8])
	}

	// PortInfoRecord of LID 4 (Hca2 port 1): component mask bit 0 = EndportLID.
	q := make([]byte, portInfoRecordSize)
	binary.BigEndian.PutUint16(q[0:], 3)
	rec, err := c.Get(ctx, attrPortInfoRecord, q, 1)
	if err != nil {
		t.Fatal(err)
	}
	if lid := binary.BigEndian.Uint16(rec[4+16:]); lid != 3 {
		t.Fatalf("PortInfoRecord.PortInfo.LID = %d, want 3", lid)
	}

	binary.BigEndian.PutUint16(q[0:], 99)
	if _, err := c.Get(ctx, attrPortInfoRecord, q, 1); !errors.Is(err, ErrNoRecords) {
		t.Fatalf("LID 99: err = %v, want ErrNoRecords", err)
	}
	if recs, err := c.GetTable(ctx, attrPortInfoRecord, q, 1); err != nil || len(recs) != 0 {
		t.Fatalf("GetTable LID 99: %d records, %v", len(recs), err)
	}
}

func TestNoSubnetManager(t *testing.T) {
	if _, err := New(nil, 0, 0, 0); err == nil {
		t.Fatal("an SM LID of 0 must be refused")
	}
}

func TestSplitTable(t *testing.T) {
	reply := make([]byte, DataOffset+200)
	binary.BigEndian.PutUint16(reply[offAttrOffset:], 8) // 64-byte stride
	recs, err := SplitTable(reply, 64)
	if err != nil || len(recs) != 3 {
		t.Fatalf("%d records, %v; want the 3 that fit", len(recs), err)
	}
	recs, err = SplitTable(reply[:DataOffset+70], 64)
	if err != nil || len(recs) != 1 {
		t.Fatalf("short reply: %d records, %v; want 1", len(recs), err)
	}
	binary.BigEndian.PutUint16(reply[offAttrOffset:], 4)
	if _, err := SplitTable(reply, 64); err == nil {
		t.Fatal("a stride shorter than the record must be an error")
	}
}
