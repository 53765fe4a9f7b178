// Package sa is the subnet administration client: Get, GetTable and Set of
// SA records with component masks, and the path resolution every GMP needs
// (IBA 15.4).
package sa

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/rpc"
	"github.com/ibtool/ibtool/internal/umad"
)

// SA MAD layout after the common and RMPP headers (IBA 15.2.1.1).
const (
	ClassVersion     = 2
	offSMKey         = 36
	offAttrOffset    = 44
	offCompMask      = 48
	DataOffset       = 56
	maxDataSingleMAD = mad.Size - DataOffset
)

// statusNoRecords is the SA's ERR_NO_RECORDS in the class-specific status
// bits (IBA 15.2.1.1, Table 196).
const statusNoRecords = 0x0300

// ErrNoRecords is returned by Get when the SA has no matching record.
var ErrNoRecords = errors.New("the SA has no matching record")

// Client sends SA queries to the subnet manager's SA.
type Client struct {
	eng  *rpc.Engine
	addr umad.Address
	// SMKey is put in every request (needed for some Set and trusted
	// queries; infiniband-diags reads it from ibdiag.conf's sa_key).
	SMKey uint64
}

// New returns a client for the SA at smLID (normally the local port's SM
// LID; -s/--sm_port overrides it), using service level sl.
func New(eng *rpc.Engine, smLID uint16, sl uint8, pkeyIndex uint16) (*Client, error) {
	if smLID == 0 {
		return nil, errors.New("no subnet manager: the local port has no SM LID (is an SM running? use -s to name the SA's LID)")
	}
	return &Client{eng: eng, addr: umad.Address{LID: smLID, QP: 1, QKey: umad.QP1QKey, SL: sl, PKeyIndex: pkeyIndex}}, nil
}

// NewFromPort returns a client for the SA the local port knows of.
func NewFromPort(eng *rpc.Engine, smLIDOverride uint16, pkeyIndex uint16) (*Client, error) {
	info, err := eng.Port().Info()
	if err != nil {
		return nil, fmt.Errorf("reading the local port: %w", err)
	}
	lid := info.SMLID
	if smLIDOverride != 0 {
		lid = smLIDOverride
	}
	return New(eng, lid, info.SMSL, pkeyIndex)
}

// Request builds an SA request MAD for a record with a component mask.
func (c *Client) Request(method uint8, attrID uint16, record []byte, compMask uint64) mad.Header {
	h := mad.NewRequest(mad.ClassSubnAdm, ClassVersion, method, attrID, 0)
	binary.BigEndian.PutUint64(h[offSMKey:], c.SMKey)
	binary.BigEndian.PutUint64(h[offCompMask:], compMask)
	if len(record) > maxDataSingleMAD {
		// A record longer than one MAD's data goes out segmented; the
		// engine does RMPP. Kernel layout: first MAD, then data chunks.
		h = append(h, make([]byte, len(record)-maxDataSingleMAD)...)
	}
	copy(h[DataOffset:], record)
	return h
}

// Get returns the one record matching record's fields selected by
// compMask (SubnAdmGet).
func (c *Client) Get(ctx context.Context, attrID uint16, record []byte, compMask uint64) ([]byte, error) {
	reply, err := c.do(ctx, mad.MethodGet, attrID, record, compMask)
	if err != nil {
		return nil, err
	}
	return padTo(reply[DataOffset:], len(record)), nil
}

// padTo returns b with zeros appended up to n bytes: responders may leave
// off trailing bytes of a record.
func padTo(b []byte, n int) []byte {
	if len(b) >= n {
		return b
	}
	return append(append([]byte(nil), b...), make([]byte, n-len(b))...)
}

// Set writes a record (SubnAdmSet) and returns the SA's reply record.
func (c *Client) Set(ctx context.Context, attrID uint16, record []byte, compMask uint64) ([]byte, error) {
	reply, err := c.do(ctx, mad.MethodSet, attrID, record, compMask)
	if err != nil {
		return nil, err
	}
	return reply[DataOffset:], nil
}

// Delete removes a record (SubnAdmDelete).
func (c *Client) Delete(ctx context.Context, attrID uint16, record []byte, compMask uint64) ([]byte, error) {
	reply, err := c.do(ctx, methodDelete, attrID, record, compMask)
	if err != nil {
		return nil, err
	}
	return reply[DataOffset:], nil
}

const methodDelete = 0x15

// GetTable returns every record matching (SubnAdmGetTable). Records are
// AttributeOffset 8-byte words apart (IBA 15.2.1.1). Only complete records
// are returned: under ibsim, which has no RMPP, a table arrives as one MAD
// truncated after 200 bytes of records.
func (c *Client) GetTable(ctx context.Context, attrID uint16, record []byte, compMask uint64) ([][]byte, error) {
	reply, err := c.do(ctx, mad.MethodGetTable, attrID, record, compMask)
	if errors.Is(err, ErrNoRecords) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return SplitTable(reply, len(record))
}

// SplitTable cuts a GetTableResp (kernel RMPP layout) into its records.
// recordSize is the record's size without padding.
func SplitTable(reply []byte, recordSize int) ([][]byte, error) {
	if len(reply) < DataOffset {
		return nil, fmt.Errorf("SA reply too short (%d bytes)", len(reply))
	}
	stride := int(binary.BigEndian.Uint16(reply[offAttrOffset:])) * 8
	data := reply[DataOffset:]
	if stride == 0 {
		return nil, nil // no records (IBA: AttributeOffset 0 with no data)
	}
	if stride < recordSize {
		return nil, fmt.Errorf("SA reply has records %d bytes apart, but the record is %d bytes", stride, recordSize)
	}
	var recs [][]byte
	for off := 0; off+recordSize <= len(data); off += stride {
		recs = append(recs, data[off:off+recordSize])
	}
	return recs, nil
}

// do sends one query and returns the reply's meaningful bytes.
func (c *Client) do(ctx context.Context, method uint8, attrID uint16, record []byte, compMask uint64) (mad.Header, error) {
	req := c.Request(method, attrID, record, compMask)
	reply, err := c.eng.Do(ctx, &rpc.Request{Addr: c.addr, MAD: req, Dest: "SA"})
	if err != nil {
		return nil, err
	}
	switch st := reply.MAD.Status(); {
	case st&0x7F00 == statusNoRecords && st&0xFF == 0:
		return nil, ErrNoRecords
	case st != 0:
		return nil, &rpc.StatusError{Addr: c.addr, Req: req, Reply: reply.MAD}
	}
	if reply.Length < DataOffset {
		return nil, fmt.Errorf("SA reply too short (%d bytes)", reply.Length)
	}
	return reply.MAD[:reply.Length], nil
}

// Addr is the SA's address.
func (c *Client) Addr() umad.Address { return c.addr }
