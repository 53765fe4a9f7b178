package saquery

// Talking to the SA: one request, its failures as the C tool reports
// them, and the GetTable of records decoded with their generated types.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	"github.com/ibtool/ibtool/internal/cli/cmdutil"
	"github.com/ibtool/ibtool/internal/ctext"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/rpc"
	"github.com/ibtool/ibtool/internal/sa"
)

// saFailure is get_any_records' handling of a failed query: the message
// it prints and the status it returns.
func saFailure(err error) *cmdutil.Failure {
	var te *rpc.TimeoutError
	code := SaEIO
	if errors.As(err, &te) {
		code = SaETIMEDOUT
	}
	return saFail(code, "Query SA failed: %s\n", ctext.Strerror(code))
}

// saStatusText is sa_report_err's line for a non-success SA status.
func saStatusText(status uint16) string {
	var madErr, saErr string
	if st := status & 0xFF; st != 0 {
		busy, redirect := "", ""
		if st&1 != 0 {
			busy = "BUSY"
		}
		if st&2 != 0 {
			redirect = "Redirection Required"
		}
		madErr = fmt.Sprintf(" (%s; %s; %s)", busy, redirect, madInvalidFieldText(int(st>>2)))
	}
	if st := status >> 8; st != 0 {
		saErr = fmt.Sprintf(" SA(%s)", saErrorText(int(st)))
	}
	return fmt.Sprintf("ERROR: Query result returned 0x%04x, %s%s\n", status, madErr, saErr)
}

var saErrorTexts = []string{
	"SA_NO_ERROR",
	"SA_ERR_NO_RESOURCES",
	"SA_ERR_REQ_INVALID",
	"SA_ERR_NO_RECORDS",
	"SA_ERR_TOO_MANY_RECORDS",
	"SA_ERR_REQ_INVALID_GID",
	"SA_ERR_REQ_INSUFFICIENT_COMPONENTS",
	"SA_ERR_REQ_DENIED",
	"SA_ERR_STATUS_PRIO_SUGGESTED",
	"SA_ERR_UNKNOWN",
}

func saErrorText(st int) string {
	if st >= len(saErrorTexts) {
		st = len(saErrorTexts) - 1
	}
	return saErrorTexts[st]
}

var madInvalidFieldTexts = []string{
	"MAD No invalid fields",
	"MAD Bad version",
	"MAD Method specified is not supported",
	"MAD Method/Attribute combination is not supported",
	"MAD Reserved",
	"MAD Reserved",
	"MAD Reserved",
	"MAD Invalid value in Attribute field(s) or Attribute Modifier",
	"MAD UNKNOWN ERROR",
}

func madInvalidFieldText(f int) string {
	if f >= len(madInvalidFieldTexts) {
		f = len(madInvalidFieldTexts) - 1
	}
	return madInvalidFieldTexts[f]
}

// query sends one SA request and returns the reply's valid bytes, or the
// C tool's failure.
func (q *saQuery) query(method uint8, attr uint16, mod uint32, data []byte, mask uint64) (mad.Header, error) {
	req := q.sa.Request(method, attr, data, mask)
	binary.BigEndian.PutUint32(req[20:24], mod)
	reply, err := q.eng.Do(q.ctx, &rpc.Request{Addr: q.sa.Addr(), MAD: req, Dest: "SA"})
	if err != nil {
		if q.opts.Verbose > 0 || q.opts.Debug > 0 {
			fmt.Fprintf(q.env.IO.Err, "saquery: %v\n", err)
		}
		return nil, saFailure(err)
	}
	if st := reply.MAD.Status(); st != 0 {
		return nil, saFail(SaEIO, "%s", saStatusText(st))
	}
	n := reply.Length
	if n <= 0 || n > len(reply.MAD) {
		n = len(reply.MAD)
	}
	if n < sa.DataOffset {
		return nil, saFail(SaEIO, "Query SA failed: reply of %d bytes is too short\n", n)
	}
	return reply.MAD[:n], nil
}

// getTable is get_any_records: a GetTable, its records split and decoded
// with the generated type of attribute attr: the one decode that both the
// text and the JSON print.
func (q *saQuery) getTable(attr uint16, mod uint32, data []byte, mask uint64) ([]saRecord, error) {
	d := mad.LookupAttr(mad.ClassSubnAdm, attr)
	reply, err := q.query(mad.MethodGetTable, attr, mod, data, mask)
	if err != nil {
		return nil, err
	}
	raws, err := sa.SplitTable(reply, d.Size)
	if err != nil {
		return nil, saFail(SaEIO, "Query SA failed: %v\n", err)
	}
	recs := make([]saRecord, len(raws))
	for i, raw := range raws {
		r := &recs[i]
		r.Struct, r.showKeys = d.New(), q.opts.ShowKeys
		if err := r.Unmarshal(raw); err != nil {
			return nil, saFail(SaEIO, "Query SA failed: %v\n", err)
		}
		switch rec := r.Struct.(type) {
		case *mad.NodeRecord:
			r.name = q.names.Name(uint64(rec.NodeInfo.NodeGUID), string(rec.NodeDescription.NodeString[:]))
		case *mad.MCMemberRecord:
			r.cProxyJoin = raw[49] & 1 // see saCProxyJoin
		}
	}
	return recs, nil
}

// mainTable is the command's own GetTable: it applies MEMBER=VALUE to the
// record, reports the request with -v and fills the JSON header.
func (q *saQuery) mainTable(name string, rec mad.Struct, mask uint64, mod uint32, patch func([]byte)) ([]saRecord, error) {
	d := rec.Desc()
	if err := q.applyMembers(rec, &mask); err != nil {
		return nil, err
	}
	data := mad.Encode(rec)
	if patch != nil {
		patch(data)
	}
	fields := mad.CompMaskFields(d, mask)
	if q.res.Query == "" {
		q.res.Query, q.res.Method, q.res.AttributeID, q.res.ComponentMask = name, "GetTable", d.AttrID, mask
		q.res.MaskFields = append([]string{}, fields...)
	}
	if q.opts.Verbose > 0 {
		fmt.Fprintf(q.env.IO.Err, "saquery: SubnAdmGetTable(%s) attribute 0x%04X modifier 0x%08X component mask 0x%016X %v\n",
			d.Name, d.AttrID, mod, mask, fields)
	}
	return q.getTable(d.AttrID, mod, data, mask)
}

// applyMembers sets the MEMBER=VALUE components in rec and their bits in
// mask.
func (q *saQuery) applyMembers(rec mad.Struct, mask *uint64) error {
	for _, m := range q.members {
		err := mad.SetText(rec, m.path, m.value)
		if err != nil && strings.Count(m.value, ":") == 3 && !strings.Contains(m.value, "::") {
			// A GUID written as 0002:c903:0000:1234.
			if err2 := mad.SetText(rec, m.path, "0x"+strings.ReplaceAll(m.value, ":", "")); err2 == nil {
				err = nil
			}
		}
		if err != nil {
			return saFail(SaEINVAL, "Invalid %s=%s for %s: %v\n", m.path, m.value, rec.Desc().Name, err)
		}
		bits, err := mad.CompMask(rec.Desc(), m.path)
		if err != nil {
			return saFail(SaEINVAL, "Invalid %s=%s for %s: %v\n", m.path, m.value, rec.Desc().Name, err)
		}
		*mask |= bits
	}
	return nil
}

// queryCPI is query_sa_cpi: the SA's ClassPortInfo, which -c prints and
// SwitchInfoRecord needs (MulticastFDBTop is there only if the SA says so).
func (q *saQuery) queryCPI() error {
	reply, err := q.query(mad.MethodGet, mad.AttrClassPortInfo, 0, nil, 0)
	if err != nil {
		var ex *cmdutil.Failure
		if errors.As(err, &ex) {
			ex.CStderr += "Failed to query SA:ClassPortInfo\n"
		}
		return err
	}
	// A short reply reads as zeros past its end.
	data := make([]byte, mad.ClassPortInfoSize)
	copy(data, reply[sa.DataOffset:])
	q.res.cpi = &mad.ClassPortInfo{}
	return q.res.cpi.Unmarshal(data)
}
