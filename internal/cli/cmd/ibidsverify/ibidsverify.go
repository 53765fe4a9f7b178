package ibidsverify

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/internal/cli/cmdutil"
	"github.com/ibtool/ibtool/internal/cli/render"
	"github.com/ibtool/ibtool/internal/ctext"
	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/fabricids"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/nodename"
	"github.com/ibtool/ibtool/internal/query"
)

// ibidsverify: infiniband-diags' ibidsverify.pl. The script reads the
// fabric as `ibnetdiscover -g` prints it, from a file it keeps in
// /var/cache/infiniband-diags (written on first use or with -R, reused
// otherwise), and reports zero LIDs and LIDs, node GUIDs and port GUIDs
// that appear twice. ibtool writes and reads the same file. When it
// discovers the fabric (-R, no file yet, or --load-cache) it checks the
// fabric model itself, reading its IDs in the file's order; an existing
// file it reads with the script's own patterns (topofile.go). Either way
// the IDs are checked by fabricids under the script's rules, and the
// findings and their order are the script's, quirks included:
//   - only base LIDs are compared, a CA's for each linked port, a
//     switch's of its port 0; a GUID is named by the LID of the port it
//     was read with;
//   - a node the file prints twice (a chassis' spine and line switches
//     under -g) has its LID and GUIDs reported as duplicates of its own;
//   - a port GUID is checked against the node GUIDs read before it only;
//   - the zero-GUID test compares the GUID's text with "0", so it never
//     reports one;
//   - a CA's port GUID is read up to the last ')' of its line, which on a
//     link to a CA or router, or to a node whose name holds a ')', is no
//     GUID: such a port GUID is never compared.
// Deliberate differences, on texts the C tools do not write: IDs compare
// as numbers, so a hand-edited file that writes one ID two ways ("0x10",
// "0x0010") or an ID that is no number reads differently; and a node name
// holding the script's patterns ("# lid 5 ") does not change what is read
// of a model.

// IdsCacheDir is where the script keeps its ibnetdiscover output
// (IBswcountlimits.pm's cache_dir).
var IdsCacheDir = "/var/cache/infiniband-diags"

type ibidsverifyOptions struct {
	cmdutil.Common
	src        query.Source // --load-cache, --node-name-map
	regenerate bool
}

// NewCmd builds the ibidsverify command.
func NewCmd(env *cmdutil.Env, _ string) *cobra.Command {
	opts := &ibidsverifyOptions{}
	cmd := cmdutil.ToolCommand("ibidsverify [options]", "Check the fabric for zero and duplicate LIDs and GUIDs")
	cmd.Long = `Validate LIDs and GUIDs (check for zero and duplicates) in the local subnet,
as infiniband-diags' ibidsverify does. The fabric is read from
` + IdsCacheDir + `/ibnetdiscover-<ca>-<port>.topology (ibnetdiscover -g
output), which is written by discovering the fabric when it does not exist or
-R asks for it; with --load-cache, from an ibnetdiscover cache instead. One
line per problem; the exit status is 1 when there is one.`
	cmd.Args = cmdutil.ArgsBetween(0, 0)
	fs := cmd.Flags()
	fs.BoolVarP(&opts.regenerate, "Recalculate", "R", false, "recalculate ibnetdiscover information (default is to reuse ibnetdiscover output)")
	opts.src.AddFlags(fs, query.FlagLoadCache|query.FlagNodeNameMap)
	cmdutil.SetupCommon(env, cmd, &opts.Common, "zDLGtsKyYe")
	cmd.RunE = func(_ *cobra.Command, _ []string) error { return runIbidsverify(env, opts) }
	return cmd
}

// idsProblem is one thing ibidsverify found.
type idsProblem struct {
	// Kind: zero_lid, duplicate_lid, duplicate_node_guid,
	// duplicate_port_guid, port_guid_is_node_guid.
	Kind     string    `json:"kind"`
	LID      *uint16   `json:"lid,omitempty"`
	NodeGUID *mad.GUID `json:"node_guid,omitempty"`
	PortGUID *mad.GUID `json:"port_guid,omitempty"`
	NodeType string    `json:"node_type,omitempty"`
	// FirstLID and FirstNodeGUID are where the LID or GUID was seen first.
	FirstLID      *uint16   `json:"first_lid,omitempty"`
	FirstNodeGUID *mad.GUID `json:"first_node_guid,omitempty"`
	// Text is the script's line.
	Text string `json:"text"`
}

type IdsResult struct {
	TopologyFile string       `json:"topology_file,omitempty"`
	Problems     []idsProblem `json:"problems"`
}

func (r *IdsResult) WriteText(w io.Writer) error {
	for _, p := range r.Problems {
		if _, err := io.WriteString(w, p.Text); err != nil {
			return err
		}
	}
	return nil
}

func runIbidsverify(env *cmdutil.Env, opts *ibidsverifyOptions) error {
	c := &opts.Common
	res := &IdsResult{Problems: []idsProblem{}}
	uses, err := idsUses(env, opts, res)
	if err == nil {
		for _, p := range fabricids.Check(uses, fabricids.Script) {
			res.Problems = append(res.Problems, scriptProblem(p))
		}
	}
	if err := cmdutil.Finish(env, c, "ibidsverify", res, err); err != nil {
		return err
	}
	if len(res.Problems) > 0 {
		return &cmdutil.ExitError{Code: 1, Err: cmdutil.ErrSilent}
	}
	return nil
}

// idsUses are the fabric's IDs as the script reads them: from its file
// when that exists (and -R does not ask for a new one), else from the
// fabric discovered (or --load-cache), whose file it writes first.
func idsUses(env *cmdutil.Env, opts *ibidsverifyOptions, res *IdsResult) ([]fabricids.Use, error) {
	c := &opts.Common
	if opts.src.LoadCache != "" {
		f, names, err := idsFabric(env, opts)
		if err != nil {
			return nil, err
		}
		return scriptUses(render.NewTopoPrinter(f, names, false), names), nil
	}
	if err := os.MkdirAll(IdsCacheDir, 0o700); err != nil {
		return nil, fmt.Errorf("cannot create %s: %w", IdsCacheDir, err)
	}
	file := filepath.Join(IdsCacheDir, "ibnetdiscover-"+c.CA+"-"+c.Port+".topology")
	res.TopologyFile = file
	if !opts.regenerate {
		text, err := os.ReadFile(file)
		if err == nil {
			return readTopology(text), nil
		}
		if !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
	}
	f, names, err := idsFabric(env, opts)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	tp := render.NewTopoPrinter(f, names, false)
	tp.W = bufio.NewWriter(&buf)
	tp.Topology(true, false)
	if err := tp.W.Flush(); err != nil {
		return nil, err
	}
	if err := os.WriteFile(file, buf.Bytes(), 0o644); err != nil {
		return nil, err
	}
	return scriptUses(tp, names), nil
}

// idsFabric discovers the fabric (or loads --load-cache).
func idsFabric(env *cmdutil.Env, opts *ibidsverifyOptions) (*discovery.Fabric, *nodename.Map, error) {
	f, err := cmdutil.NetdiscFabric(env, &opts.Common, &opts.src, nil)
	if err != nil {
		return nil, nil, err
	}
	return f, opts.src.Names(env.IO.Err), nil
}

// topoPrinter is what scriptUses needs of render's topology printer.
type topoPrinter interface {
	TopologyNodes(group bool) []*discovery.Node
	Name(n *discovery.Node) string
}

// scriptUses are the IDs of the fabric in the order ibnetdiscover -g
// prints them, less the port GUIDs the script cannot read: a CA's or
// router's port line holds a ')' after its port GUID when the peer is no
// switch (the peer's port GUID follows) or the peer's name (the node name
// map's) holds one, and the script's pattern reads up to the last.
func scriptUses(tp topoPrinter, names *nodename.Map) []fabricids.Use {
	uses := fabricids.Uses(tp.TopologyNodes(true))
	out := uses[:0]
	for _, u := range uses {
		if u.ID == fabricids.PortGUID && u.Node.Type != discovery.NodeSwitch {
			peer := u.Node.Port(u.Port).Remote.Node
			if peer.Type != discovery.NodeSwitch || strings.Contains(tp.Name(peer), ")") {
				continue
			}
		}
		out = append(out, u)
	}
	return out
}

// scriptProblem is a problem as the script prints it, and its JSON.
func scriptProblem(p fabricids.Problem) idsProblem {
	u := p.Use
	lid, node, port := u.LID, mad.GUID(u.NodeGUID), mad.GUID(u.Value)
	out := idsProblem{Kind: string(p.Kind), LID: &lid, NodeGUID: &node, NodeType: ctext.IdsScriptNodeType(u.NodeType)}
	switch p.Kind {
	case fabricids.ZeroLID:
		out.Text = fmt.Sprintf("LID 0 found for %s NodeGUID 0x%x\n", out.NodeType, u.NodeGUID)
	case fabricids.DuplicateLID:
		firstNode := mad.GUID(p.First.NodeGUID)
		out.FirstNodeGUID = &firstNode
		out.Text = fmt.Sprintf("LID %d already defined for NodeGUID 0x%x\n", u.Value, p.First.NodeGUID)
	case fabricids.DuplicateNodeGUID:
		firstLID := p.First.LID
		out.FirstLID = &firstLID
		out.Text = fmt.Sprintf("NodeGUID 0x%x already defined for LID %d\n", u.Value, firstLID)
	case fabricids.DuplicatePortGUID:
		firstLID := p.First.LID
		out.PortGUID, out.FirstLID = &port, &firstLID
		out.Text = fmt.Sprintf("PortGUID 0x%x already defined for LID %d\n", u.Value, firstLID)
	case fabricids.PortGUIDIsNodeGUID:
		out.PortGUID = &port
		out.Text = fmt.Sprintf("PortGUID 0x%x is an invalid duplicate of a NodeGUID\n", u.Value)
	}
	return out
}
