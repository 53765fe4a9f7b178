package rdmabw

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/ibtool/ibtool/internal/verbs"
)

// The out-of-band exchange runs over one TCP connection:
//
//	client -> server  hello   (test parameters and the client's endpoint)
//	server -> client  hello   (the server's endpoint, buffer for Size bytes)
//	server -> client  ready   (the server's QP can receive)
//	client -> server  done    (how the test went on the client)
//	server -> client  verdict (whether the server's buffer holds the data)
//
// Every message is a frame: "IBBW", version, type, payload length (uint16),
// payload; integers are big-endian.

const (
	frameMagic   = "IBBW"
	frameVersion = 1
	headerLen    = 8
	maxPayload   = 1024
)

// Message types.
const (
	msgHello   byte = 'H'
	msgReady   byte = 'R'
	msgDone    byte = 'D'
	msgVerdict byte = 'V'
)

// Endpoint is what one side tells the other about its QP and buffer.
type Endpoint struct {
	LID  uint16    `json:"lid"`
	QPN  uint32    `json:"qpn"`
	PSN  uint32    `json:"psn"`
	GID  verbs.GID `json:"-"`
	MTU  verbs.MTU `json:"-"`
	RKey uint32    `json:"rkey"`
	Addr uint64    `json:"vaddr"`
	Len  uint64    `json:"length"`
}

// hello opens the exchange in both directions.
type hello struct {
	Size   uint64 // message size in bytes
	Iters  uint64
	NumSGE uint32
	Seed   uint32 // data pattern the server checks
	Ep     Endpoint
}

// done is the client's account of the test.
type done struct {
	OK        bool
	Completed uint64 // writes completed
	Nanos     uint64 // first post to last completion
	Message   string // why it failed
}

// verdict is the server's check of its buffer.
type verdict struct {
	OK      bool
	Checked uint64 // bytes compared
}

const helloLen = 8 + 8 + 4 + 4 + (2 + 1 + 1 + 4 + 4 + 4 + 8 + 8 + 16)

func (h *hello) marshal() []byte {
	b := make([]byte, 0, helloLen)
	b = binary.BigEndian.AppendUint64(b, h.Size)
	b = binary.BigEndian.AppendUint64(b, h.Iters)
	b = binary.BigEndian.AppendUint32(b, h.NumSGE)
	b = binary.BigEndian.AppendUint32(b, h.Seed)
	e := &h.Ep
	b = binary.BigEndian.AppendUint16(b, e.LID)
	b = append(b, byte(e.MTU), 0)
	b = binary.BigEndian.AppendUint32(b, e.QPN)
	b = binary.BigEndian.AppendUint32(b, e.PSN)
	b = binary.BigEndian.AppendUint32(b, e.RKey)
	b = binary.BigEndian.AppendUint64(b, e.Addr)
	b = binary.BigEndian.AppendUint64(b, e.Len)
	return append(b, e.GID[:]...)
}

func (h *hello) unmarshal(b []byte) error {
	if len(b) != helloLen {
		return fmt.Errorf("hello of %d bytes, want %d", len(b), helloLen)
	}
	h.Size = binary.BigEndian.Uint64(b[0:])
	h.Iters = binary.BigEndian.Uint64(b[8:])
	h.NumSGE = binary.BigEndian.Uint32(b[16:])
	h.Seed = binary.BigEndian.Uint32(b[20:])
	e := &h.Ep
	e.LID = binary.BigEndian.Uint16(b[24:])
	e.MTU = verbs.MTU(b[26])
	e.QPN = binary.BigEndian.Uint32(b[28:])
	e.PSN = binary.BigEndian.Uint32(b[32:])
	e.RKey = binary.BigEndian.Uint32(b[36:])
	e.Addr = binary.BigEndian.Uint64(b[40:])
	e.Len = binary.BigEndian.Uint64(b[48:])
	copy(e.GID[:], b[56:72])
	if e.MTU.Bytes() == 0 {
		return fmt.Errorf("invalid MTU code %d", b[26])
	}
	if e.QPN == 0 || e.QPN > 0xffffff || e.PSN > 0xffffff {
		return fmt.Errorf("invalid QPN 0x%x or PSN 0x%x", e.QPN, e.PSN)
	}
	return nil
}

func (d *done) marshal() []byte {
	msg := d.Message
	if len(msg) > maxPayload-19 {
		msg = msg[:maxPayload-19]
	}
	b := []byte{0}
	if d.OK {
		b[0] = 1
	}
	b = binary.BigEndian.AppendUint64(b, d.Completed)
	b = binary.BigEndian.AppendUint64(b, d.Nanos)
	b = binary.BigEndian.AppendUint16(b, uint16(len(msg)))
	return append(b, msg...)
}

func (d *done) unmarshal(b []byte) error {
	if len(b) < 19 || len(b) != 19+int(binary.BigEndian.Uint16(b[17:])) || b[0] > 1 {
		return errors.New("malformed done message")
	}
	d.OK = b[0] == 1
	d.Completed = binary.BigEndian.Uint64(b[1:])
	d.Nanos = binary.BigEndian.Uint64(b[9:])
	d.Message = string(b[19:])
	return nil
}

func (v *verdict) marshal() []byte {
	b := []byte{0}
	if v.OK {
		b[0] = 1
	}
	return binary.BigEndian.AppendUint64(b, v.Checked)
}

func (v *verdict) unmarshal(b []byte) error {
	if len(b) != 9 || b[0] > 1 {
		return errors.New("malformed verdict message")
	}
	v.OK = b[0] == 1
	v.Checked = binary.BigEndian.Uint64(b[1:])
	return nil
}

// writeFrame sends one message.
func writeFrame(w io.Writer, typ byte, payload []byte) error {
	if len(payload) > maxPayload {
		return fmt.Errorf("message of %d bytes is too long", len(payload))
	}
	b := make([]byte, 0, headerLen+len(payload))
	b = append(b, frameMagic...)
	b = append(b, frameVersion, typ)
	b = binary.BigEndian.AppendUint16(b, uint16(len(payload)))
	b = append(b, payload...)
	_, err := w.Write(b)
	return err
}

// readFrame receives one message of the wanted type.
func readFrame(r io.Reader, want byte) ([]byte, error) {
	var h [headerLen]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("peer closed the connection")
		}
		return nil, err
	}
	if string(h[:4]) != frameMagic {
		return nil, fmt.Errorf("peer is not an ibtool rdma_bw (got %q)", h[:4])
	}
	if h[4] != frameVersion {
		return nil, fmt.Errorf("peer speaks rdma_bw protocol version %d, this is version %d", h[4], frameVersion)
	}
	n := int(binary.BigEndian.Uint16(h[6:]))
	if n > maxPayload {
		return nil, fmt.Errorf("message of %d bytes is too long", n)
	}
	payload := make([]byte, n)
	if _, err := io.ReadFull(r, payload); err != nil {
		return nil, fmt.Errorf("short message: %w", err)
	}
	if h[5] != want {
		if h[5] == msgDone && want != msgDone {
			// A client that failed early says why.
			var d done
			if d.unmarshal(payload) == nil && !d.OK {
				return nil, fmt.Errorf("peer failed: %s", d.Message)
			}
		}
		return nil, fmt.Errorf("expected message %q, got %q", want, h[5])
	}
	return payload, nil
}
