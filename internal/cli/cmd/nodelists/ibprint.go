package nodelists

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/internal/cli/cmdutil"
	"github.com/ibtool/ibtool/internal/cli/render"
	"github.com/ibtool/ibtool/internal/ctext"
	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/endport"
	"github.com/ibtool/ibtool/internal/fabricdoc"
	"github.com/ibtool/ibtool/internal/nodename"
	"github.com/ibtool/ibtool/internal/query"
)

// ibprintca, ibprintswitch and ibprintrt: python-rdma's (and old
// infiniband-diags' ibprint*.pl) one node of the topology, looked up by
// node GUID and printed as its stanza of ibnetdiscover's output; -l lists
// the nodes of the type as ibhosts, ibswitches and ibrouters do. With --sa
// the node comes from a NodeRecord query by GUID (and its ports and links
// from the SA's other records) instead of a discovery.

type ibprintOptions struct {
	cmdutil.Common
	src  query.Source
	list bool
}

type ibprintKind struct {
	name, what string
	list       nodeList
}

// ibprintKinds are ibprintca, ibprintswitch and ibprintrt.
var ibprintKinds = []ibprintKind{
	{"ibprintca", "CA", listHosts},
	{"ibprintswitch", "switch", listSwitches},
	{"ibprintrt", "router", listRouters},
}

// NewIbprintCmd builds ibprintca, ibprintswitch or ibprintrt.
func NewIbprintCmd(env *cmdutil.Env, name string) *cobra.Command {
	for _, k := range ibprintKinds {
		if k.name == name {
			return newIbprintCmd(env, k)
		}
	}
	panic("ibprint: no command " + name)
}

func newIbprintCmd(env *cmdutil.Env, k ibprintKind) *cobra.Command {
	opts := &ibprintOptions{}
	cmd := cmdutil.ToolCommand(k.name+" [options] [-l | NODE_GUID]", "Show one "+k.what+" as ibnetdiscover prints it")
	cmd.Long = fmt.Sprintf(`Print the %s with node GUID NODE_GUID as its stanza of ibnetdiscover's
topology (the same lines), or with -l list every %s as %s does.
NODE_GUID is hex, with or without 0x, or in colon groups (0002:c903:0000:1491).
With --sa the node, its ports and links come from SA records (a NodeRecord
query by GUID), not from a discovery; --load-cache reads a cache file instead.`,
		k.what, k.what, k.list.name)
	cmd.Args = cmdutil.ArgsBetween(0, 1)
	fs := cmd.Flags()
	fs.BoolVarP(&opts.list, "list", "l", false, "list every "+k.what+" (as "+k.list.name+")")
	opts.src.AddFlags(fs, query.AllSourceFlags)
	cmdutil.SetupCommon(env, cmd, &opts.Common, "DGLs")
	cmd.RunE = func(c *cobra.Command, args []string) error { return runIbprint(env, k, opts, args) }
	return cmd
}

// parseNodeGUID reads a node GUID: 0x-prefixed or bare hex, or colon
// groups.
func parseNodeGUID(s string) (uint64, error) {
	if strings.Contains(s, ":") {
		return endport.ParseGUID(s)
	}
	h := s
	if len(h) > 2 && (h[:2] == "0x" || h[:2] == "0X") {
		h = h[2:]
	}
	if v, err := strconv.ParseUint(h, 16, 64); err == nil && h != "" {
		return v, nil
	}
	return 0, fmt.Errorf("invalid node GUID %q: hex digits, with or without 0x, or colon groups", s)
}

func runIbprint(env *cmdutil.Env, k ibprintKind, opts *ibprintOptions, args []string) error {
	c := &opts.Common
	if _, err := c.TimeoutMS(cmdutil.DefaultTimeoutMS); err != nil {
		return err
	}
	var guid uint64
	var name string // a node named instead of its GUID
	switch {
	case opts.list && len(args) > 0:
		return cmdutil.UsageErrorf("-l lists every %s: no NODE_GUID", k.what)
	case !opts.list && len(args) == 0:
		return cmdutil.UsageErrorf("a NODE_GUID or -l is needed")
	case !opts.list:
		var err error
		if guid, err = parseNodeGUID(args[0]); err != nil {
			if !endport.IsName(args[0]) {
				return cmdutil.UsageErrorf("%v", err)
			}
			name = args[0]
		}
	}
	names := opts.src.Names(env.IO.Err)
	if opts.list {
		res := &nodeListResult{lists: []nodeList{k.list}, names: names}
		return cmdutil.Finish(env, c, k.name, res, res.discover(env, c, &opts.src))
	}
	res := &nodeStanza{names: names}
	if err := cmdutil.Finish(env, c, k.name, res, res.find(env, c, &opts.src, k, guid, name)); err != nil {
		return err
	}
	if opts.src.Live() {
		return cmdutil.WalkIncomplete(env, c, k.name, res.fab)
	}
	return nil
}

// nodeStanza is ibprint*'s result: one node, as its stanza of
// ibnetdiscover's topology. Its JSON is the node's document.
type nodeStanza struct {
	fabricdoc.NodeDoc
	names *nodename.Map
	fab   *discovery.Fabric
	node  *discovery.Node
}

// find gets the node with that GUID (or name), which must be of k's type:
// from the fabric of src, or with --sa from the SA's records of it alone.
func (r *nodeStanza) find(env *cmdutil.Env, c *cmdutil.Common, src *query.Source, k ibprintKind, guid uint64, name string) error {
	_, useSA, err := src.Mode()
	if err != nil {
		return cmdutil.UsageErrorf("%v", err)
	}
	if useSA && src.Live() && name == "" {
		r.fab, err = nodeFromSA(env, c, src, guid)
	} else {
		r.fab, err = cmdutil.FabricFrom(env, c, src, nil)
	}
	if err != nil {
		return err
	}
	if name != "" {
		if guid, err = namedNode(r.fab, name, k, r.names); err != nil {
			return err
		}
	}
	n := r.fab.Node(guid)
	if n == nil {
		return fmt.Errorf("could not find node 0x%016x", guid)
	}
	if n.Type != k.list.typ {
		return fmt.Errorf("node 0x%016x is a %s, not a %s", guid, strings.ToLower(ctext.NodeTypeStr(n.Type)), k.what)
	}
	r.node, r.NodeDoc = n, fabricdoc.NodeJSON(n, r.names)
	return nil
}

// namedNode is the GUID of the one node of k's type that name names.
func namedNode(f *discovery.Fabric, name string, k ibprintKind, names *nodename.Map) (uint64, error) {
	var cands []query.Candidate
	for _, cand := range query.NamedInFabric(f, name, names) {
		if f.Node(cand.NodeGUID).Type == k.list.typ {
			cands = append(cands, cand)
		}
	}
	switch len(cands) {
	case 0:
		return 0, cmdutil.UsageErrorf("no %s is named %q (by node-name-map or NodeDescription)", k.what, name)
	case 1:
		return cands[0].NodeGUID, nil
	}
	return 0, &query.AmbiguousNameError{Name: name, Candidates: cands}
}

// nodeFromSA reads the node and its peers from the SA's records.
func nodeFromSA(env *cmdutil.Env, c *cmdutil.Common, src *query.Source, guid uint64) (*discovery.Fabric, error) {
	client, err := cmdutil.OpenSourceClient(env, c, src)
	if err != nil {
		return nil, err
	}
	defer client.Engine().Close()
	fab, err := client.NodeSA(context.Background(), guid)
	if errors.Is(err, discovery.ErrNodeNotFound) {
		return nil, fmt.Errorf("could not find node 0x%016x", guid)
	}
	return fab, err
}

func (r *nodeStanza) WriteText(w io.Writer) error {
	if r.node == nil {
		return nil
	}
	var text strings.Builder
	tp := render.NewTopoPrinter(r.fab, r.names, false)
	tp.W = bufio.NewWriter(&text)
	if r.node.Type == discovery.NodeSwitch {
		tp.SwitchWithPorts(r.node, false, nil)
	} else {
		tp.CaWithPorts(r.node, false, nil)
	}
	if err := tp.W.Flush(); err != nil {
		return err
	}
	_, err := io.WriteString(w, strings.TrimPrefix(text.String(), "\n"))
	return err
}
