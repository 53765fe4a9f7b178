package cli

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/internal/endport"
	"github.com/ibtool/ibtool/internal/jsonv"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/rpc"
	"github.com/ibtool/ibtool/internal/umad"
)

type smpdumpOptions struct {
	Common
	asString bool
	decode   bool
}

func init() { register(newSmpdumpCmd) }

func newSmpdumpCmd(env *Env) *cobra.Command {
	opts := &smpdumpOptions{}
	cmd := toolCommand("smpdump [options] <dlid|dr_path> <attr> [mod]", "Dump the raw data of any SMP attribute")
	cmd.Example = `  smpdump -D 0,1,2,3,5 16     # NODE DESC
  smpdump -D 0,1,2 0x15 2     # PORT INFO, port 2
  smpdump 3 0x15 2            # PORT INFO, lid 3 port 2
  smpdump 0xa0 0x11           # NODE INFO, lid 0xa0`
	cmd.Flags().BoolVarP(&opts.asString, "string", "s", false, "print the data as a string (node description)")
	cmd.Flags().BoolVarP(&opts.decode, "decode", "p", false, "also print the attribute decoded, field by field (python-rdma's -p)")
	setupCommon(env, cmd, &opts.Common, "GKs")
	cmd.RunE = func(c *cobra.Command, args []string) error {
		if len(args) < 2 || len(args) > 3 {
			return usageErrorf("expected <dlid|dr_path> <attr> [mod]")
		}
		return runSmpdump(env, opts, args)
	}
	return cmd
}

// smpdumpResult is smpdump's JSON output.
type smpdumpResult struct {
	Target    jsonv.Target `json:"target"`
	Attribute uint16       `json:"attribute_id"`
	Modifier  uint32       `json:"attribute_modifier"`
	Status    uint16       `json:"status"`
	Data      string       `json:"data"` // the 64 data bytes in hex
	// Decoded is the attribute as mad's JSON (with --decode, for known
	// attributes).
	Decoded json.RawMessage `json:"decoded,omitempty"`
}

func runSmpdump(env *Env, opts *smpdumpOptions, args []string) error {
	attr, err := endport.ParseUint(args[1], 16)
	if err != nil {
		return usageErrorf("invalid attribute %q: %v", args[1], err)
	}
	var mod uint64
	if len(args) > 2 {
		if mod, err = endport.ParseUint(args[2], 32); err != nil {
			return usageErrorf("invalid attribute modifier %q: %v", args[2], err)
		}
	}
	req, res, err := smpdumpRequest(opts, args[0], uint16(attr), uint32(mod))
	if err != nil {
		return usageErrorf("%v", err)
	}
	eng, err := openEngine(env, &opts.Common, engineConfig{timeout: rpc.DefaultTimeout, retries: -1})
	if err != nil {
		return err
	}
	defer eng.Close()
	reply, err := eng.Do(context.Background(), req)
	if err != nil {
		return err
	}
	res.Status = reply.MAD.Status()
	data := reply.MAD.SMPData()
	res.Data = hex.EncodeToString(data)
	var decoded mad.Struct
	if opts.decode {
		if d := mad.LookupAttr(mad.ClassSubnLID, res.Attribute); d != nil {
			decoded = d.New()
			if err := decoded.Unmarshal(data); err != nil {
				return err
			}
			if res.Decoded, err = json.Marshal(decoded); err != nil {
				return err
			}
		}
	}
	if opts.JSON {
		return writeJSON(env.IO.Out, res)
	}
	var b strings.Builder
	if opts.asString {
		if i := strings.IndexByte(string(data), 0); i >= 0 {
			data = data[:i]
		}
		b.Write(data)
		b.WriteByte('\n')
	} else {
		b.WriteString(hexDump(data))
	}
	if res.Status != 0 {
		fmt.Fprintf(&b, "SMP status: 0x%x\n", res.Status)
	}
	if opts.decode {
		b.WriteString(decodedSMPData(decoded, res.Attribute))
	}
	_, err = fmt.Fprint(env.IO.Out, b.String())
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

// smpdumpRequest builds the SubnGet for a LID (default, -L) or a directed
// route (-D).
func smpdumpRequest(opts *smpdumpOptions, target string, attr uint16, mod uint32) (*rpc.Request, *smpdumpResult, error) {
	res := &smpdumpResult{Attribute: attr, Modifier: mod}
	if opts.Direct && !opts.Lid {
		path, err := endport.ParseDRPath(target)
		if err != nil {
			return nil, nil, err
		}
		res.Target = ibPortID{Path: path}.json()
		return &rpc.Request{
			Addr: umad.Address{LID: umad.PermissiveLID},
			MAD:  mad.NewDRSMP(mad.MethodGet, attr, mod, path),
		}, res, nil
	}
	lid, err := endport.ParseLID(target)
	if err != nil {
		return nil, nil, err
	}
	res.Target = ibPortID{LID: lid}.json()
	return &rpc.Request{Addr: umad.Address{LID: lid}, MAD: mad.NewLIDSMP(mad.MethodGet, attr, mod)}, res, nil
}
