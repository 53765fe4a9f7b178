package query

import (
	"context"
	"errors"
	"fmt"

	"github.com/ibtool/ibtool/internal/mad"
)

// Write is a command's permission to change the fabric. Only a command
// whose purpose is a write makes one, from the flag or argument that asks
// for it (perfquery -R, ibportstate disable, ...): a Set without one is
// refused before anything is sent.
type Write struct {
	// By names what allowed the write, for the -v log ("perfquery -R").
	By string
}

// ErrNoWrite is returned by a Set that has no Write.
var ErrNoWrite = errors.New("refusing to change the fabric: the command was not asked to write")

// Set writes in to attribute in's at d with modifier mod, and decodes the
// reply (the attribute as the agent now has it) into out when out is not
// nil. It is the one path of every fabric write: it refuses without w and
// logs the write to Options.Log.
func (c *Client) Set(ctx context.Context, w *Write, d Dest, mod uint32, in, out mad.Struct) error {
	class, err := ClassOf(in.Desc(), d)
	if err != nil {
		return err
	}
	return c.SetClass(ctx, w, class, d, mod, in, out)
}

// SetClass is Set in the given management class.
func (c *Client) SetClass(ctx context.Context, w *Write, class uint8, d Dest, mod uint32, in, out mad.Struct) error {
	if w == nil {
		return ErrNoWrite
	}
	desc := in.Desc()
	req, err := c.Request(d, class, mad.MethodSet, desc.AttrID, mod, mad.Encode(in))
	if err != nil {
		return err
	}
	c.logWrite(w, fmt.Sprintf("Set %s (modifier 0x%x) at %s", desc.Name, mod, d))
	reply, err := c.Do(ctx, req)
	if err != nil {
		return err // it names the request already ("SubnSet(PortInfo) LID 2 ...")
	}
	if out != nil {
		return out.Unmarshal(attrData(reply))
	}
	return nil
}

// SetSA writes record rec to the SA (SubnAdmSet) with the components
// compMask selects, and decodes the SA's reply record into out when out
// is not nil (IBA 15.4). Like Set it refuses without w and logs the write.
func (c *Client) SetSA(ctx context.Context, w *Write, rec mad.Struct, compMask uint64, out mad.Struct) error {
	if w == nil {
		return ErrNoWrite
	}
	r, err := c.resolverWithSA()
	if err != nil {
		return err
	}
	desc := rec.Desc()
	c.logWrite(w, fmt.Sprintf("SubnAdmSet %s (component mask 0x%x) at SA Lid %d", desc.Name, compMask, r.SA.Addr().LID))
	reply, err := r.SA.Set(ctx, desc.AttrID, mad.Encode(rec), compMask)
	if err != nil {
		return err
	}
	if out != nil {
		return out.Unmarshal(reply)
	}
	return nil
}

// logWrite is the -v line of every write.
func (c *Client) logWrite(w *Write, what string) {
	if c.opts.Log != nil {
		c.opts.Log("write: %s, asked by %s", what, w.By)
	}
}

// Raw is an attribute kept with the bytes it was decoded from. A Set of a
// Raw sends those bytes with the attribute's fields marshalled over them,
// so the bits the field table does not describe (reserved, vendor) go
// back as the agent gave them, as the C tools do when they edit the reply
// of a Get and send it back (ibportstate).
type Raw struct {
	mad.Struct
	Bytes []byte
}

// Unmarshal keeps b's bytes and decodes them.
func (r *Raw) Unmarshal(b []byte) error {
	r.Bytes = append(r.Bytes[:0], b[:min(len(b), r.Desc().Size)]...)
	return r.Struct.Unmarshal(b)
}

// Marshal writes the kept bytes, then the fields over them.
func (r *Raw) Marshal(b []byte) error {
	copy(b, r.Bytes)
	return r.Struct.Marshal(b)
}
