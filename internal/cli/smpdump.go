package cli

import (
	"context"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/internal/endport"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/rpc"
	"github.com/ibtool/ibtool/internal/umad"
)

type smpdumpOptions struct {
	Common
	asString bool
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
	Route     string `json:"route"` // "lid" or "dr"
	LID       uint16 `json:"lid,omitempty"`
	DRPath    string `json:"dr_path,omitempty"`
	Attribute uint16 `json:"attribute_id"`
	Modifier  uint32 `json:"attribute_modifier"`
	Status    uint16 `json:"status"`
	Data      string `json:"data"` // the 64 data bytes in hex
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
	_, err = fmt.Fprint(env.IO.Out, b.String())
	return err
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
		res.Route, res.DRPath = "dr", mad.FormatDRPath(path)
		return &rpc.Request{
			Addr: umad.Address{LID: umad.PermissiveLID},
			MAD:  mad.NewDRSMP(mad.MethodGet, attr, mod, path),
		}, res, nil
	}
	lid, err := endport.ParseLID(target)
	if err != nil {
		return nil, nil, err
	}
	res.Route, res.LID = "lid", lid
	return &rpc.Request{Addr: umad.Address{LID: lid}, MAD: mad.NewLIDSMP(mad.MethodGet, attr, mod)}, res, nil
}
