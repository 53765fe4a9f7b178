package setnodedesc

// set_nodedesc: show, or set, the node descriptions of the local CAs
// (python-rdma's "ibtool set_nodedesc [-v] [NAME]").
//
// Without NAME, or with -v, each local CA's description is shown,
// "<ca>: <description>". With NAME it is written to every local CA, or
// only to the one -C (a CA name or node GUID) or -P (a port: DEV/PORT, a
// port GUID, or a port number of the first CA) chooses. The local node
// only: set_nodedesc never changes another node's description.
//
// Where: the CA's sysfs file <sysfs>/class/infiniband/<ca>/node_desc,
// which the kernel's SMA answers NodeDescription queries from. A
// transport without sysfs (the ibsim simulator), or --smp, sends a
// SubnSet(NodeDescription) to the local node over a 0-hop directed route
// instead, through the one write path; IBA 14.2.5.2 makes the attribute
// read-only, so only an SMA that allows it takes the Set (ibsim answers
// "method unsupported", and set_nodedesc says so).
//
// Output of a set: "<ca>: '<before>' -> '<after>'" per CA changed.
//
// Bad input (exit 2, nothing written): a NAME longer than the 64 bytes
// of a NodeDescription, a -C/-P that names no local CA.
//
// JSON (--json): {"cas": [{"name", "node_guid", "node_description",
// "previous_node_description" (after a set), "via" ("sysfs"|"smp")}]}.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/internal/cli/cmdutil"
	"github.com/ibtool/ibtool/internal/endport"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/query"
	"github.com/ibtool/ibtool/internal/rpc"
	"github.com/ibtool/ibtool/internal/umad"
)

type setNodedescOptions struct {
	cmdutil.Common
	viewAll bool
	smp     bool
}

// NewCmd builds the set_nodedesc command.
func NewCmd(env *cmdutil.Env, _ string) *cobra.Command {
	opts := &setNodedescOptions{}
	cmd := cmdutil.ToolCommand("set_nodedesc [options] [<name>]", "Show or set the local CAs' node descriptions")
	cmd.Long = "set_nodedesc shows the node description of each local CA, or sets it to <name> on every\n" +
		"local CA (or the one -C or -P selects), through sysfs (or a SubnSet to the local node where\n" +
		"there is no sysfs, or with --smp)."
	cmd.Example = `  set_nodedesc                      # show them
  set_nodedesc "$(hostname -s) HCA-1"  # set every local CA's
  set_nodedesc -C mlx5_0 "node7 mlx5_0"`
	fs := cmd.Flags()
	fs.BoolVarP(&opts.viewAll, "view", "v", false, "show the descriptions (and set nothing)")
	fs.BoolVar(&opts.smp, "smp", false, "set through a SubnSet(NodeDescription) to the local node, not sysfs")
	cmdutil.SetupCommon(env, cmd, &opts.Common, "DLGsKyYv")
	cmd.RunE = func(c *cobra.Command, args []string) error {
		if len(args) > 1 {
			return cmdutil.UsageErrorf("expected at most one <name> (quote a name with spaces)")
		}
		res, err := runSetNodedesc(env, opts, args)
		return cmdutil.Finish(env, &opts.Common, "set_nodedesc", res, err)
	}
	return cmd
}

type nodedescCA struct {
	Name     string   `json:"name"`
	NodeGUID mad.GUID `json:"node_guid"`
	Desc     string   `json:"node_description"`
	Previous *string  `json:"previous_node_description,omitempty"`
	Via      string   `json:"via"`
}

type setNodedescResult struct {
	CAs []nodedescCA `json:"cas"`
}

func (r *setNodedescResult) WriteText(w io.Writer) error {
	var b strings.Builder
	for _, ca := range r.CAs {
		if ca.Previous != nil {
			fmt.Fprintf(&b, "%s: %q -> %q\n", ca.Name, *ca.Previous, ca.Desc)
		} else {
			fmt.Fprintf(&b, "%s: %s\n", ca.Name, ca.Desc)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func runSetNodedesc(env *cmdutil.Env, opts *setNodedescOptions, args []string) (cmdutil.Result, error) {
	setting := len(args) == 1 && !opts.viewAll
	if setting && len(args[0]) > mad.NodeDescriptionSize {
		return nil, cmdutil.UsageErrorf("the name is %d bytes: a node description has at most %d", len(args[0]), mad.NodeDescriptionSize)
	}
	cas, err := nodedescCAs(env, &opts.Common)
	if err != nil {
		return nil, err
	}
	root, hasSysfs := sysfsRootOf(env)
	via := "sysfs"
	if !hasSysfs || opts.smp {
		via = "smp"
	}
	res := &setNodedescResult{}
	for _, ca := range cas {
		nd := nodedescCA{Name: ca.Name, NodeGUID: mad.GUID(ca.NodeGUID), Via: via}
		file := filepath.Join(root, "class/infiniband", ca.Name, "node_desc")
		if via == "sysfs" {
			nd.Desc, err = readNodeDesc(file)
		} else {
			nd.Desc, err = localNodeDescSMP(env, opts, ca, nil)
		}
		if err != nil {
			return res, err
		}
		if setting {
			prev := nd.Desc
			nd.Previous, nd.Desc = &prev, args[0]
			if via == "sysfs" {
				err = os.WriteFile(file, []byte(args[0]), 0)
			} else {
				nd.Desc, err = localNodeDescSMP(env, opts, ca, &args[0])
			}
			if err != nil {
				return res, fmt.Errorf("%s: setting the node description: %w%s", ca.Name, err, readOnlyHint(err))
			}
		}
		res.CAs = append(res.CAs, nd)
	}
	return res, nil
}

// nodedescCAs are the local CAs, or the one -C/-P chooses.
func nodedescCAs(env *cmdutil.Env, c *cmdutil.Common) ([]umad.CA, error) {
	cas, err := env.Transport.CAs()
	if err != nil && len(cas) == 0 {
		return nil, fmt.Errorf("listing the local CAs: %w", err)
	}
	if c.CA == "" && c.Port == "" {
		return cas, nil
	}
	local, err := endport.SelectLocal(cas, c.CA, c.Port)
	if err != nil {
		return nil, cmdutil.UsageErrorf("%v", err)
	}
	for _, ca := range cas {
		if ca.Name == local.CA {
			return []umad.CA{ca}, nil
		}
	}
	return nil, cmdutil.UsageErrorf("no local CA %q", local.CA)
}

// sysfsRootOf is the transport's sysfs root, if it reads sysfs.
func sysfsRootOf(env *cmdutil.Env) (string, bool) {
	if s, ok := env.Transport.(interface{ SysfsRoot() string }); ok {
		return s.SysfsRoot(), true
	}
	return "", false
}

func readNodeDesc(file string) (string, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return "", err
	}
	return strings.TrimRight(string(b), "\n\x00"), nil
}

// localNodeDescSMP reads the local node's NodeDescription over a 0-hop
// directed route (the local node, whatever the LIDs), or, with name, sets
// it there and returns what the SMA answers.
func localNodeDescSMP(env *cmdutil.Env, opts *setNodedescOptions, ca umad.CA, name *string) (string, error) {
	cm := opts.Common
	cm.CA = ca.Name
	c, err := cmdutil.OpenClient(env, &cm, cmdutil.EngineConfig{Timeout: rpc.DefaultTimeout})
	if err != nil {
		return "", err
	}
	defer c.Engine().Close()
	ctx, local := context.Background(), query.DR([]byte{0})
	var got mad.NodeDescription
	if name == nil {
		err = c.Get(ctx, local, 0, nil, &got)
	} else {
		var nd mad.NodeDescription
		copy(nd.NodeString[:], *name)
		// The name on the command line asks for this write.
		err = c.Set(ctx, &query.Write{By: "set_nodedesc " + *name}, local, 0, &nd, &got)
	}
	if err != nil {
		return "", err
	}
	return got.String(), nil
}

// readOnlyHint explains an SMA's "method unsupported" to a SubnSet of
// NodeDescription: IBA makes the attribute read-only, only the host can
// change it.
func readOnlyHint(err error) string {
	var se *rpc.StatusError
	if errors.As(err, &se) && se.Reply.Status()&0x7FFF == 0x0008 {
		return "; this SMA does not allow it (IBA 14.2.5.2: read-only), set it on the host through sysfs"
	}
	return ""
}
