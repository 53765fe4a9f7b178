package ibcacheedit

import (
	"encoding/binary"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/internal/cache"
	"github.com/ibtool/ibtool/internal/cli/cmdutil"
	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/endport"
	"github.com/ibtool/ibtool/internal/jsonv"
	"github.com/ibtool/ibtool/internal/mad"
)

type ibcacheeditOptions struct {
	cmdutil.Common
	switchGUID, caGUID, sysimgGUID, portGUID string
}

// NewCmd builds the ibcacheedit command.
func NewCmd(env *cmdutil.Env, _ string) *cobra.Command {
	opts := &ibcacheeditOptions{}
	cmd := cmdutil.ToolCommand("ibcacheedit [options] <orig.cache> <new.cache>", "Edit the GUIDs in an ibnetdiscover cache file")
	cmd.Long = `ibcacheedit rewrites node, port and system image GUIDs in a cache written by
ibnetdiscover --cache (or ibtool), for example after a node's hardware was
replaced, and writes the result to a new cache file. The edits apply in the
order --switchguid, --caguid, --sysimgguid, --portguid. docs/cache.md has
the details.`
	cmd.Example = `  ibcacheedit --switchguid 0x2c90000001:0x2c90000002 old.cache new.cache
  ibcacheedit --portguid 0x100000:0x100001:0x100011 old.cache new.cache`
	fs := cmd.Flags()
	fs.StringVar(&opts.switchGUID, "switchguid", "", "BEFOREGUID:AFTERGUID: specify before and after switchguid to edit")
	fs.StringVar(&opts.caGUID, "caguid", "", "BEFOREGUID:AFTERGUID: specify before and after caguid to edit")
	fs.StringVar(&opts.sysimgGUID, "sysimgguid", "", "BEFOREGUID:AFTERGUID: specify before and after sysimgguid to edit")
	fs.StringVar(&opts.portGUID, "portguid", "", "NODEGUID:BEFOREGUID:AFTERGUID: specify before and after port guid to edit")
	cmdutil.SetupCommon(env, cmd, &opts.Common, "CDdeGKLPstvy")
	cmd.RunE = func(c *cobra.Command, args []string) error {
		res := &CacheEditResult{Edits: []CacheEdit{}}
		return cmdutil.Finish(env, &opts.Common, "ibcacheedit", res, res.run(c, opts, args))
	}
	return cmd
}

// CacheEditResult is ibcacheedit's JSON output.
type CacheEditResult struct {
	Input  string      `json:"input"`
	Output string      `json:"output"`
	Edits  []CacheEdit `json:"edits"`
}

// CacheEdit is one option's effect.
type CacheEdit struct {
	Option string `json:"option"` // switchguid, caguid, sysimgguid, portguid
	// NodeGUID is --portguid's NODEGUID.
	NodeGUID string       `json:"node_guid,omitempty"`
	Before   string       `json:"before_guid"`
	After    string       `json:"after_guid"`
	Changed  int          `json:"changed"`
	Nodes    []EditedNode `json:"nodes"`
}

// EditedNode is a node an edit changed, with its GUID after the edit.
type EditedNode struct {
	NodeGUID    string         `json:"node_guid"`
	NodeType    jsonv.NodeType `json:"node_type"`
	Description string         `json:"description"`
	// Port is the CA port whose GUID --portguid changed.
	Port int `json:"port,omitempty"`
}

// guidEdit is a parsed option.
type guidEdit struct {
	option        string
	node          uint64 // --portguid only
	before, after uint64
}

// parseGUIDEdit reads BEFORE:AFTER, or NODE:BEFORE:AFTER when withNode.
func parseGUIDEdit(option, arg string, withNode bool) (*guidEdit, error) {
	n := 2
	if withNode {
		n = 3
	}
	parts := strings.Split(arg, ":")
	if len(parts) != n {
		// The C tool's message, then why.
		return nil, cmdutil.UsageErrorf("invalid input '%s': --%s takes %s", arg, option, map[bool]string{false: "BEFOREGUID:AFTERGUID", true: "NODEGUID:BEFOREGUID:AFTERGUID"}[withNode])
	}
	var v [3]uint64
	for i, p := range parts {
		g, err := endport.ParseUint(p, 64)
		if err != nil {
			return nil, cmdutil.UsageErrorf("invalid input '%s': %v", arg, err)
		}
		v[i] = g
	}
	e := &guidEdit{option: option, before: v[0], after: v[1]}
	if withNode {
		e.node, e.before, e.after = v[0], v[1], v[2]
	}
	return e, nil
}

// run checks the options and arguments as the C tool does, then edits.
func (res *CacheEditResult) run(cmd *cobra.Command, opts *ibcacheeditOptions, args []string) error {
	var edits []*guidEdit
	for _, o := range []struct {
		name     string
		value    *string
		withNode bool
	}{
		{"switchguid", &opts.switchGUID, false},
		{"caguid", &opts.caGUID, false},
		{"sysimgguid", &opts.sysimgGUID, false},
		{"portguid", &opts.portGUID, true},
	} {
		if !cmd.Flags().Changed(o.name) {
			continue
		}
		e, err := parseGUIDEdit(o.name, *o.value, o.withNode)
		if err != nil {
			return err
		}
		edits = append(edits, e)
	}
	// The C tool's checks and wording (IBEXIT, exit 255).
	switch {
	case len(args) < 1:
		return &cmdutil.Failure{CMsg: "original cache file not specified"}
	case len(args) < 2:
		return &cmdutil.Failure{CMsg: "new cache file not specified"}
	case len(args) > 2:
		return cmdutil.UsageErrorf("expected <orig.cache> <new.cache>, got %d arguments", len(args))
	}
	res.Input, res.Output = args[0], args[1]
	return res.edit(edits)
}

// edit applies the edits to the input cache and writes the output cache.
func (res *CacheEditResult) edit(edits []*guidEdit) error {
	fab, err := cache.Read(res.Input)
	if err != nil {
		return &cmdutil.Failure{CMsg: "loading original cached fabric failed", Err: err}
	}
	// libibnetdisc changes GUIDs in place and never rehashes, so its output
	// keeps the port records in the buckets of the original GUIDs.
	orig := map[*discovery.Port]uint64{}
	for _, n := range fab.Nodes {
		for _, p := range n.Ports {
			if p != nil {
				orig[p] = p.GUID
			}
		}
	}
	for _, e := range edits {
		ce, err := applyGUIDEdit(fab, e)
		if err != nil {
			return err
		}
		res.Edits = append(res.Edits, *ce)
	}
	fab, err = reindexFabric(fab)
	if err != nil {
		return &cmdutil.Failure{CMsg: "caching new cache data failed", Err: err}
	}
	if err := cache.WriteWith(res.Output, fab, cache.WriteOptions{
		BucketGUID: func(p *discovery.Port) uint64 { return orig[p] },
	}); err != nil {
		return &cmdutil.Failure{CMsg: "caching new cache data failed", Err: err}
	}
	return nil
}

// WriteText writes nothing: the C tool is silent when the edit succeeds.
func (r *CacheEditResult) WriteText(io.Writer) error { return nil }

// applyGUIDEdit makes one edit the way ibcacheedit.c does.
func applyGUIDEdit(fab *discovery.Fabric, e *guidEdit) (*CacheEdit, error) {
	ce := &CacheEdit{Option: e.option, Before: cacheEditGUID(e.before), After: cacheEditGUID(e.after), Nodes: []EditedNode{}}
	touched := func(n *discovery.Node, port int) {
		ce.Changed++
		ce.Nodes = append(ce.Nodes, EditedNode{NodeGUID: cacheEditGUID(n.GUID), NodeType: jsonv.NodeTypeOf(mad.NodeType(n.Type)), Description: n.Desc(), Port: port})
	}
	// setNodeGUID changes a node's GUID; a switch's ports carry it too.
	setNodeGUID := func(n *discovery.Node) {
		n.GUID = e.after
		if n.Type == discovery.NodeSwitch {
			for _, p := range n.Ports {
				if p != nil {
					p.GUID = n.GUID
				}
			}
		}
	}
	switch e.option {
	case "switchguid", "caguid":
		typ := discovery.NodeSwitch
		if e.option == "caguid" {
			typ = discovery.NodeCA
		}
		for _, n := range fab.Nodes {
			if n.Type == typ && n.GUID == e.before {
				setNodeGUID(n)
				touched(n, 0)
			}
		}
		if ce.Changed == 0 {
			return nil, &cmdutil.Failure{CMsg: fmt.Sprintf("%s = %x not found", e.option, e.before)}
		}
	case "sysimgguid":
		for _, n := range fab.Nodes {
			if len(n.NodeInfo) >= 12 && n.SystemImageGUID() == e.before {
				binary.BigEndian.PutUint64(n.NodeInfo[4:], e.after)
				touched(n, 0)
			}
		}
		if ce.Changed == 0 {
			return nil, &cmdutil.Failure{CMsg: fmt.Sprintf("sysimgguid = %x not found", e.before)}
		}
	case "portguid":
		ce.NodeGUID = cacheEditGUID(e.node)
		nodeFound := false
		for _, n := range fab.Nodes {
			if n.GUID != e.node {
				continue
			}
			nodeFound = true
			if n.Type == discovery.NodeSwitch {
				if n.GUID == e.before {
					setNodeGUID(n)
					touched(n, 0)
				}
				continue
			}
			for num := 1; num <= n.NumPorts; num++ {
				if p := n.Port(num); p != nil && p.GUID == e.before {
					p.GUID = e.after
					touched(n, num)
					break
				}
			}
		}
		if !nodeFound {
			return nil, &cmdutil.Failure{CMsg: fmt.Sprintf("nodeguid = %x not found", e.node)}
		}
		if ce.Changed == 0 {
			return nil, &cmdutil.Failure{CMsg: fmt.Sprintf("portguid = %x not found", e.before)}
		}
	}
	return ce, nil
}

// reindexFabric rebuilds the fabric's GUID index after GUIDs changed. Two
// nodes with one GUID are an error: libibnetdisc would write them, but a
// cache like that does not load back as the same fabric.
func reindexFabric(f *discovery.Fabric) (*discovery.Fabric, error) {
	g := discovery.NewFabric()
	for _, n := range f.Nodes {
		if g.AddNode(n) != n {
			return nil, fmt.Errorf("two nodes would have GUID 0x%016x", n.GUID)
		}
	}
	g.From, g.MaxHops, g.Errors = f.From, f.MaxHops, f.Errors
	return g, nil
}

func cacheEditGUID(g uint64) string { return fmt.Sprintf("0x%016x", g) }
