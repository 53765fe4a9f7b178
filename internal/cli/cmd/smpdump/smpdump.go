package smpdump

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/internal/cli/cmdutil"
	"github.com/ibtool/ibtool/internal/endport"
	"github.com/ibtool/ibtool/internal/jsonv"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/query"
	"github.com/ibtool/ibtool/internal/rpc"
)

type smpdumpOptions struct {
	cmdutil.Common
	asString bool
	decode   bool
}

// NewCmd builds the smpdump command.
func NewCmd(env *cmdutil.Env, _ string) *cobra.Command {
	opts := &smpdumpOptions{}
	cmd := cmdutil.ToolCommand("smpdump [options] <dlid|dr_path> <attr> [mod]", "Dump the raw data of any SMP attribute")
	cmd.Example = `  smpdump -D 0,1,2,3,5 16     # NODE DESC
  smpdump -D 0,1,2 0x15 2     # PORT INFO, port 2
  smpdump 3 0x15 2            # PORT INFO, lid 3 port 2
  smpdump 0xa0 0x11           # NODE INFO, lid 0xa0`
	cmd.Flags().BoolVarP(&opts.asString, "string", "s", false, "print the data as a string (node description)")
	cmd.Flags().BoolVarP(&opts.decode, "decode", "p", false, "also print the attribute decoded, field by field (python-rdma's -p)")
	cmdutil.SetupCommon(env, cmd, &opts.Common, "GKs")
	cmd.RunE = func(c *cobra.Command, args []string) error {
		if len(args) < 2 || len(args) > 3 {
			return cmdutil.UsageErrorf("expected <dlid|dr_path> <attr> [mod]")
		}
		res, err := runSmpdump(env, opts, args)
		return cmdutil.Finish(env, &opts.Common, "smpdump", res, err)
	}
	return cmd
}

// SmpdumpResult is smpdump's result: its JSON, and the reply's data for
// the text.
type SmpdumpResult struct {
	Target    jsonv.Target `json:"target"`
	Attribute uint16       `json:"attribute_id"`
	Modifier  uint32       `json:"attribute_modifier"`
	Status    uint16       `json:"status"`
	Data      string       `json:"data"` // the 64 data bytes in hex
	// Decoded is the attribute as mad's JSON (with --decode, for known
	// attributes).
	Decoded json.RawMessage `json:"decoded,omitempty"`

	data             []byte
	asString, decode bool
	decoded          mad.Struct
}

func runSmpdump(env *cmdutil.Env, opts *smpdumpOptions, args []string) (cmdutil.Result, error) {
	attr, err := endport.ParseUint(args[1], 16)
	if err != nil {
		return nil, cmdutil.UsageErrorf("invalid attribute %q: %v", args[1], err)
	}
	var mod uint64
	if len(args) > 2 {
		if mod, err = endport.ParseUint(args[2], 32); err != nil {
			return nil, cmdutil.UsageErrorf("invalid attribute modifier %q: %v", args[2], err)
		}
	}
	res := &SmpdumpResult{Attribute: uint16(attr), Modifier: uint32(mod), asString: opts.asString, decode: opts.decode}
	d, err := smpdumpDest(opts, args[0])
	if err != nil {
		return nil, cmdutil.UsageErrorf("%v", err)
	}
	res.Target = cmdutil.DestTarget(d, d.String())
	c, err := cmdutil.OpenClient(env, &opts.Common, cmdutil.EngineConfig{Timeout: rpc.DefaultTimeout, RetryCount: -1})
	if err != nil {
		return nil, err
	}
	defer c.Engine().Close()
	req, err := c.Request(d, mad.ClassSubnLID, mad.MethodGet, res.Attribute, res.Modifier, nil)
	if err != nil {
		return nil, err
	}
	reply, err := c.Do(context.Background(), req)
	var se *rpc.StatusError
	if errors.As(err, &se) { // smpdump shows the data and the status
		reply, err = se.Reply, nil
	}
	if err != nil {
		return nil, err
	}
	res.Status = reply.Status()
	res.data = reply.SMPData()
	res.Data = hex.EncodeToString(res.data)
	if opts.decode {
		if desc := mad.LookupAttr(mad.ClassSubnLID, res.Attribute); desc != nil {
			res.decoded = desc.New()
			if err := res.decoded.Unmarshal(res.data); err != nil {
				return nil, err
			}
			if res.Decoded, err = json.Marshal(res.decoded); err != nil {
				return nil, err
			}
		}
	}
	return res, nil
}

func (r *SmpdumpResult) WriteText(w io.Writer) error {
	var b strings.Builder
	if r.asString {
		data := r.data
		if i := bytes.IndexByte(data, 0); i >= 0 {
			data = data[:i]
		}
		b.Write(data)
		b.WriteByte('\n')
	} else {
		b.WriteString(cmdutil.HexDump(r.data))
	}
	if r.Status != 0 {
		fmt.Fprintf(&b, "SMP status: 0x%x\n", r.Status)
	}
	if r.decode {
		b.WriteString(decodedSMPData(r.decoded, r.Attribute))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// decodedSMPData is smpdump --decode's text after the dump: a "# Name"
// line and the attribute in libibmad's dotted form (keys shown: the dump
// shows them anyway); SL to VL and VL arbitration tables as smpquery
// prints them; the field dump for tables libibmad prints no labels for or
// only as one long hex string.
func decodedSMPData(s mad.Struct, attr uint16) string {
	if s == nil {
		return fmt.Sprintf("# no decoder for SMP attribute 0x%04x\n", attr)
	}
	title := "# " + s.Desc().Name + "\n"
	switch t := s.(type) {
	case *mad.SLtoVLMappingTable:
		var b strings.Builder
		b.WriteString(title + "SL: |")
		for i := 0; i < 16; i++ {
			fmt.Fprintf(&b, "%2d|", i)
		}
		return b.String() + "\nVL: " + mad.FormatSLtoVL(t)
	case *mad.VLArbitrationTable:
		return title + strings.TrimPrefix(mad.FormatVLArbitration(t, len(t.Entry)), "\n")
	}
	text := mad.Dotted(s, &mad.DottedOptions{ShowKeys: true})
	for _, f := range s.Desc().Fields {
		if f.IBMAD == "array" || f.Label == "" && !f.Reserved && f.Hint != mad.HintStruct {
			text = ""
		}
	}
	if text == "" {
		return mad.Dump(s)
	}
	return title + text
}

// smpdumpDest is the target: a LID (default, -L) or a directed route (-D).
func smpdumpDest(opts *smpdumpOptions, target string) (query.Dest, error) {
	if opts.Direct && !opts.Lid {
		path, err := endport.ParseDRPath(target)
		if err != nil {
			return query.Dest{}, err
		}
		return query.DR(path), nil
	}
	lid, err := endport.ParseLID(target)
	if err != nil {
		return query.Dest{}, err
	}
	return query.LID(lid), nil
}
