package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/endport"
	"github.com/ibtool/ibtool/internal/nodename"
)

// ibprintca, ibprintswitch and ibprintrt: python-rdma's (and old
// infiniband-diags' ibprint*.pl) one node of the topology, looked up by
// node GUID and printed as its stanza of ibnetdiscover's output; -l lists
// the nodes of the type as ibhosts, ibswitches and ibrouters do. With --sa
// the node comes from a NodeRecord query by GUID (and its ports and links
// from the SA's other records) instead of a discovery.

type ibprintOptions struct {
	Common
	list                                  bool
	nodeNameMap, loadCache, discovery, oo string
	useSA                                 bool
}

type ibprintKind struct {
	name, what string
	list       nodeList
}

func init() {
	for _, k := range []ibprintKind{
		{"ibprintca", "CA", listHosts},
		{"ibprintswitch", "switch", listSwitches},
		{"ibprintrt", "router", listRouters},
	} {
		register(func(env *Env) *cobra.Command { return newIbprintCmd(env, k) })
	}
}

func newIbprintCmd(env *Env, k ibprintKind) *cobra.Command {
	opts := &ibprintOptions{}
	cmd := toolCommand(k.name+" [options] [-l | NODE_GUID]", "Show one "+k.what+" as ibnetdiscover prints it")
	cmd.Long = fmt.Sprintf(`Print the %s with node GUID NODE_GUID as its stanza of ibnetdiscover's
topology (the same lines), or with -l list every %s as %s does.
NODE_GUID is hex, with or without 0x, or in colon groups (0002:c903:0000:1491).
With --sa the node, its ports and links come from SA records (a NodeRecord
query by GUID), not from a discovery; --load-cache reads a cache file instead.`,
		k.what, k.what, k.list.name)
	cmd.Args = argsBetween(0, 1)
	fs := cmd.Flags()
	fs.BoolVarP(&opts.list, "list", "l", false, "list every "+k.what+" (as "+k.list.name+")")
	fs.StringVar(&opts.nodeNameMap, "node-name-map", "", "node name map file")
	fs.StringVar(&opts.loadCache, "load-cache", "", "filename of ibnetdiscover cache to load")
	fs.BoolVar(&opts.useSA, "sa", false, "read the node from the SA's records instead of a discovery")
	fs.StringVar(&opts.discovery, "discovery", "", "LID, DR or SA: how the fabric is discovered")
	fs.StringVarP(&opts.oo, "outstanding_smps", "o", "", "SMPs in flight during the walk")
	setupCommon(env, cmd, &opts.Common, "DGLs")
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

// argsBetween is cobra.RangeArgs as a usage error (exit 2).
func argsBetween(lo, hi int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) < lo || len(args) > hi {
			return usageErrorf("accepts %d to %d arguments, received %d", lo, hi, len(args))
		}
		return nil
	}
}

func runIbprint(env *Env, k ibprintKind, opts *ibprintOptions, args []string) error {
	c := &opts.Common
	if _, err := c.timeoutMS(DefaultTimeoutMS); err != nil {
		return err
	}
	useSA := opts.useSA
	switch strings.ToUpper(opts.discovery) {
	case "", "LID", "DR":
	case "SA":
		useSA = true
	default:
		return usageErrorf("invalid --discovery %q: LID, DR or SA", opts.discovery)
	}
	var guid uint64
	switch {
	case opts.list && len(args) > 0:
		return usageErrorf("-l lists every %s: no NODE_GUID", k.what)
	case !opts.list && len(args) == 0:
		return usageErrorf("a NODE_GUID or -l is needed")
	case !opts.list:
		var err error
		if guid, err = parseNodeGUID(args[0]); err != nil {
			return usageErrorf("%v", err)
		}
	}
	var mkey uint64
	if c.MKey != "" {
		v, err := endport.ParseUint(c.MKey, 64)
		if err != nil {
			return usageErrorf("invalid M_Key %q: %v", c.MKey, err)
		}
		mkey = v
	}
	names := nodename.Open(opts.nodeNameMap, env.IO.Err)
	ctx := context.Background()

	var fab *discovery.Fabric
	var err error
	if opts.loadCache != "" {
		if fab, err = loadFabricCache(opts.loadCache); err != nil {
			return fmt.Errorf("loading cached fabric failed: %w", err)
		}
	} else {
		cfg := engineConfig{timeout: DefaultTimeoutMS * 1e6, retries: 3}
		if n, err := endport.ParseUint(opts.oo, 16); err == nil && n > 0 {
			cfg.window = int(n)
		}
		eng, err := openEngine(env, c, cfg)
		if err != nil {
			return err
		}
		defer eng.Close()
		switch {
		case useSA && !opts.list:
			r, err := newResolver(eng, c)
			if err != nil {
				return err
			}
			if fab, err = discovery.NodeSA(ctx, r.SA, guid, saNoRecords); err != nil {
				if errors.Is(err, discovery.ErrNodeNotFound) {
					return fmt.Errorf("could not find node 0x%016x", guid)
				}
				return err
			}
		case useSA:
			if fab, err = discoverSA(ctx, eng, c); err != nil {
				return fmt.Errorf("discover failed: %w", err)
			}
		default:
			if fab, err = discoverWith(ctx, env, eng, c, opts.discovery, mkey); err != nil {
				return fmt.Errorf("discover failed: %w", err)
			}
		}
	}

	if opts.list {
		return printNodeList(env, fab, k.list, names, c.JSON)
	}
	n := fab.Node(guid)
	if n == nil {
		return fmt.Errorf("could not find node 0x%016x", guid)
	}
	if n.Type != k.list.typ {
		return fmt.Errorf("node 0x%016x is a %s, not a %s", guid, strings.ToLower(nodeTypeStr(n.Type)), k.what)
	}
	if c.JSON {
		return writeJSON(env.IO.Out, nodeJSON(n, names))
	}
	var text strings.Builder
	tp := newTopoPrinter(fab, names, false)
	tp.w = bufio.NewWriter(&text)
	if n.Type == discovery.NodeSwitch {
		tp.switchWithPorts(n, false, nil)
	} else {
		tp.caWithPorts(n, false, nil)
	}
	if err := tp.w.Flush(); err != nil {
		return err
	}
	fmt.Fprint(env.IO.Out, strings.TrimPrefix(text.String(), "\n"))
	if opts.loadCache == "" {
		reportWalkErrors(env, k.name, fab, c.Verbose)
	}
	return nil
}

// printNodeList is -l: the lines ibhosts, ibswitches or ibrouters print
// for the fabric (or their --json).
func printNodeList(env *Env, fab *discovery.Fabric, l nodeList, names *nodename.Map, asJSON bool) error {
	if asJSON {
		doc := struct {
			Nodes []nodeDoc `json:"nodes"`
		}{Nodes: []nodeDoc{}}
		for _, n := range typeList(fab, l.typ) {
			doc.Nodes = append(doc.Nodes, nodeJSON(n, names))
		}
		return writeJSON(env.IO.Out, doc)
	}
	var text strings.Builder
	tp := newTopoPrinter(fab, names, false)
	tp.w = bufio.NewWriter(&text)
	tp.topology(false, false)
	if err := tp.w.Flush(); err != nil {
		return err
	}
	fmt.Fprint(env.IO.Out, awkNodeList(l.typ, dashEcho(strings.TrimRight(text.String(), "\n"))))
	return nil
}
