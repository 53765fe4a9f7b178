package subnetdiff

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/internal/cli/cmdutil"
	"github.com/ibtool/ibtool/internal/ctext"
	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/fabricdoc"
	"github.com/ibtool/ibtool/internal/jsonv"
	"github.com/ibtool/ibtool/internal/linkrate"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/nodename"
	"github.com/ibtool/ibtool/internal/query"
)

// subnet_diff: python-rdma's comparison of a saved fabric with the
// current one (or with another saved one). The files are libibnetdisc
// caches (ibnetdiscover --cache), not python-rdma's pickles.

type subnetDiffOptions struct {
	cmdutil.Common
	src query.Source // no --load-cache: CURRENT is the cache
}

// ExitDifferent is subnet_diff's exit code when the fabrics differ (as
// diff(1) does).
const ExitDifferent = 1

// NewCmd builds the subnet_diff command.
func NewCmd(env *cmdutil.Env, _ string) *cobra.Command {
	opts := &subnetDiffOptions{}
	cmd := cmdutil.ToolCommand("subnet_diff [options] REFERENCE [CURRENT]", "Compare a saved fabric with the current one")
	cmd.Long = `Compare a fabric saved earlier (REFERENCE, a cache file written by
ibnetdiscover --cache) with the fabric as it is now: discovered from the local
port, or read from the cache file CURRENT. Reported: the end ports (port GUIDs)
and nodes (node GUIDs) only one side has, the links only one side has, the
links both have whose width or speed differs, and the LIDs that lead to a
different end port. The exit status is 0 when nothing differs, 1 when
something does (--json prints the same as a document).`
	cmd.Args = cmdutil.ArgsBetween(1, 2)
	fs := cmd.Flags()
	opts.src.AddFlags(fs, query.FlagSA|query.FlagOutstanding|query.FlagNodeNameMap)
	cmdutil.SetupCommon(env, cmd, &opts.Common, "DGL")
	cmd.RunE = func(c *cobra.Command, args []string) error { return runSubnetDiff(env, opts, args) }
	return cmd
}

func runSubnetDiff(env *cmdutil.Env, opts *subnetDiffOptions, args []string) error {
	c := &opts.Common
	if _, err := c.TimeoutMS(cmdutil.DefaultTimeoutMS); err != nil {
		return err
	}
	if _, _, err := opts.src.Mode(); err != nil {
		return cmdutil.UsageErrorf("%v", err)
	}
	r := &diffReport{names: opts.src.Names(env.IO.Err)}
	err := cmdutil.Finish(env, c, "subnet_diff", r, r.compare(env, c, &opts.src, args))
	if err != nil {
		return err
	}
	var incomplete error
	if len(args) == 1 {
		incomplete = cmdutil.WalkIncomplete(env, c, "subnet_diff", r.cur)
	}
	if !r.d.Same() {
		return &cmdutil.ExitError{Code: ExitDifferent, Err: cmdutil.ErrSilent}
	}
	return incomplete
}

// compare reads the reference cache and the current fabric (a cache, or
// from src) and compares them.
func (r *diffReport) compare(env *cmdutil.Env, c *cmdutil.Common, src *query.Source, args []string) error {
	var err error
	if r.ref, err = query.LoadCache(args[0]); err != nil {
		return fmt.Errorf("reference %s: %w", args[0], err)
	}
	if len(args) > 1 {
		if r.cur, err = query.LoadCache(args[1]); err != nil {
			return fmt.Errorf("current %s: %w", args[1], err)
		}
	} else if r.cur, err = cmdutil.FabricFrom(env, c, src, nil); err != nil {
		return fmt.Errorf("discovering the current fabric: %w", err)
	}
	r.d = discovery.Compare(r.ref, r.cur, func(p *discovery.Port) discovery.LinkRate {
		rate := linkrate.Of(p)
		return discovery.LinkRate{Width: rate.CompatWidth(), Speed: rate.CompatSpeed()}
	})
	r.SubnetDiffDoc = r.Document()
	return nil
}

// diffReport is subnet_diff's result: a FabricDiff, with the fabrics'
// node names. Its JSON is the diff's document.
type diffReport struct {
	SubnetDiffDoc
	d        *discovery.FabricDiff
	ref, cur *discovery.Fabric
	names    *nodename.Map
}

// nodeOfPort finds the node owning an end port GUID, or with that node
// GUID, in either fabric (the current one first).
func (r *diffReport) nodeOf(guid uint64) *discovery.Node {
	for _, f := range []*discovery.Fabric{r.cur, r.ref} {
		if n := f.Node(guid); n != nil {
			return n
		}
		for _, n := range f.Nodes {
			for _, p := range n.Ports {
				if p != nil && p.GUID == guid {
					return n
				}
			}
		}
	}
	return nil
}

func (r *diffReport) nameOf(guid uint64) string {
	if n := r.nodeOf(guid); n != nil {
		return r.names.Name(n.GUID, string(n.NodeDesc))
	}
	return ""
}

func (r *diffReport) WriteText(out io.Writer) error {
	if r.d == nil {
		return nil
	}
	w := bufio.NewWriter(out)
	d := r.d
	guidLine := func(g uint64) string { return fmt.Sprintf("0x%016x \"%s\"", g, r.nameOf(g)) }
	section := func(what, whats string, cur, ref int, curOnly, refOnly []string) {
		fmt.Fprintf(w, "Current subnet has %d %s, reference subnet has %d %s\n", cur, ctext.Plural(cur, what, whats), ref, ctext.Plural(ref, what, whats))
		if len(curOnly) == 0 {
			fmt.Fprintf(w, " All %s in the current subnet are in the reference subnet.\n", whats)
		} else {
			fmt.Fprintf(w, " Current subnet has %d %s that the reference subnet does not have:\n", len(curOnly), ctext.Plural(len(curOnly), what, whats))
			for _, l := range curOnly {
				fmt.Fprintf(w, "   %s\n", l)
			}
		}
		if len(refOnly) == 0 {
			fmt.Fprintf(w, " All %s in the reference subnet are in the current subnet.\n", whats)
		} else {
			fmt.Fprintf(w, " Reference subnet has %d %s that the current subnet does not have:\n", len(refOnly), ctext.Plural(len(refOnly), what, whats))
			for _, l := range refOnly {
				fmt.Fprintf(w, "   %s\n", l)
			}
		}
	}
	guids := func(gs []uint64) []string {
		var out []string
		for _, g := range gs {
			out = append(out, guidLine(g))
		}
		return out
	}
	links := func(ls []discovery.LinkRef) []string {
		var out []string
		for _, l := range ls {
			out = append(out, r.linkText(l))
		}
		return out
	}
	section("end port", "end ports", d.CurrentEndPorts, d.ReferenceEndPorts, guids(d.CurrentOnlyEndPorts), guids(d.ReferenceOnlyEndPorts))
	section("node", "nodes", d.CurrentNodes, d.ReferenceNodes, guids(d.CurrentOnlyNodes), guids(d.ReferenceOnlyNodes))
	section("link", "links", d.CurrentLinks, d.ReferenceLinks, links(d.CurrentOnlyLinks), links(d.ReferenceOnlyLinks))
	if len(d.RateChanges) == 0 {
		fmt.Fprintf(w, " All links in both subnets have the same width and speed in both.\n")
	} else {
		fmt.Fprintf(w, " %d %s a different width or speed (current, reference):\n", len(d.RateChanges),
			ctext.Plural(len(d.RateChanges), "link has", "links have"))
		for _, c := range d.RateChanges {
			fmt.Fprintf(w, "   %s: %s, %s\n", r.linkText(c.Link), c.Current, c.Reference)
		}
	}
	fmt.Fprintf(w, "Current subnet has %d %s, reference subnet has %d %s\n", d.CurrentLIDs, ctext.Plural(d.CurrentLIDs, "LID", "LIDs"),
		d.ReferenceLIDs, ctext.Plural(d.ReferenceLIDs, "LID", "LIDs"))
	if len(d.LIDChanges) == 0 {
		fmt.Fprintf(w, " All LIDs lead to the same end ports in both subnets.\n")
	} else {
		fmt.Fprintf(w, " %d %s to different end ports (LID: current, reference):\n", len(d.LIDChanges),
			ctext.Plural(len(d.LIDChanges), "LID leads", "LIDs lead"))
		side := func(g uint64) string {
			if g == 0 {
				return fmt.Sprintf("%-18s", "-")
			}
			return fmt.Sprintf("0x%016x", g)
		}
		for _, c := range d.LIDChanges {
			fmt.Fprintf(w, "   %5d: %s %s\n", c.LID, side(c.Current), side(c.Reference))
		}
	}
	return w.Flush()
}

func (r *diffReport) linkText(l discovery.LinkRef) string {
	return fmt.Sprintf("%s \"%s\" <=> %s \"%s\"", l.A, r.nameOf(l.A.GUID), l.B, r.nameOf(l.B.GUID))
}

// The JSON form (docs/json.md, "subnet_diff").
type SubnetDiffDoc struct {
	Same      bool                   `json:"same"`
	Current   subnetCountsDoc        `json:"current"`
	Reference subnetCountsDoc        `json:"reference"`
	EndPorts  guidSetDiffDoc         `json:"end_ports"`
	Nodes     guidSetDiffDoc         `json:"nodes"`
	Links     linkSetDiffDoc         `json:"links"`
	Rates     []rateChangeDoc        `json:"rate_changes"`
	LIDs      []lidChangeDoc         `json:"lid_changes"`
	Complete  bool                   `json:"complete"`
	Errors    []fabricdoc.WalkErrDoc `json:"errors"`
}

type subnetCountsDoc struct {
	EndPorts int `json:"end_ports"`
	Nodes    int `json:"nodes"`
	Links    int `json:"links"`
	LIDs     int `json:"lids"`
}

// guidDoc is a node (node_guid) or an end port (port_guid) and the name
// of its node.
type guidDoc struct {
	NodeGUID *mad.GUID `json:"node_guid,omitempty"`
	PortGUID *mad.GUID `json:"port_guid,omitempty"`
	NodeName string    `json:"node_name"`
}

type guidSetDiffDoc struct {
	CurrentOnly   []guidDoc `json:"current_only"`
	ReferenceOnly []guidDoc `json:"reference_only"`
}

type linkEndsDoc struct {
	A jsonv.LinkEnd `json:"a"`
	B jsonv.LinkEnd `json:"b"`
}

type linkSetDiffDoc struct {
	CurrentOnly   []linkEndsDoc `json:"current_only"`
	ReferenceOnly []linkEndsDoc `json:"reference_only"`
}

// rateDoc is a link's rate from ibnetdiscover's columns ("4x", "EDR").
type rateDoc struct {
	jsonv.Rate
}

func rateDocOf(r discovery.LinkRate) rateDoc {
	return rateDoc{jsonv.RateOf(jsonv.Width(strings.ToUpper(r.Width)), r.Speed)}
}

type rateChangeDoc struct {
	Link      linkEndsDoc `json:"link"`
	Current   rateDoc     `json:"current"`
	Reference rateDoc     `json:"reference"`
}

// lidChangeDoc is a LID and the end port GUID it leads to on each side.
type lidChangeDoc struct {
	LID               uint16    `json:"lid"`
	CurrentPortGUID   *mad.GUID `json:"current_port_guid,omitempty"`
	ReferencePortGUID *mad.GUID `json:"reference_port_guid,omitempty"`
}

func (r *diffReport) Document() SubnetDiffDoc {
	d := r.d
	guids := func(gs []uint64, port bool) []guidDoc {
		out := []guidDoc{}
		for _, g := range gs {
			mg := mad.GUID(g)
			d := guidDoc{NodeGUID: &mg, NodeName: r.nameOf(g)}
			if port {
				d.NodeGUID, d.PortGUID = nil, &mg
			}
			out = append(out, d)
		}
		return out
	}
	end := func(p discovery.PortRef) jsonv.LinkEnd {
		e := jsonv.LinkEnd{NodeName: r.nameOf(p.GUID), Port: p.Num, PortGUID: mad.GUID(p.GUID)}
		if n := r.nodeOf(p.GUID); n != nil {
			e.NodeGUID, e.NodeType = mad.GUID(n.GUID), fabricdoc.NodeTypeOf(n)
		}
		return e
	}
	link := func(l discovery.LinkRef) linkEndsDoc { return linkEndsDoc{A: end(l.A), B: end(l.B)} }
	links := func(ls []discovery.LinkRef) []linkEndsDoc {
		out := []linkEndsDoc{}
		for _, l := range ls {
			out = append(out, link(l))
		}
		return out
	}
	doc := SubnetDiffDoc{
		Same:      d.Same(),
		Current:   subnetCountsDoc{d.CurrentEndPorts, d.CurrentNodes, d.CurrentLinks, d.CurrentLIDs},
		Reference: subnetCountsDoc{d.ReferenceEndPorts, d.ReferenceNodes, d.ReferenceLinks, d.ReferenceLIDs},
		EndPorts:  guidSetDiffDoc{guids(d.CurrentOnlyEndPorts, true), guids(d.ReferenceOnlyEndPorts, true)},
		Nodes:     guidSetDiffDoc{guids(d.CurrentOnlyNodes, false), guids(d.ReferenceOnlyNodes, false)},
		Links:     linkSetDiffDoc{links(d.CurrentOnlyLinks), links(d.ReferenceOnlyLinks)},
		Rates:     []rateChangeDoc{},
		LIDs:      []lidChangeDoc{},
		Errors:    []fabricdoc.WalkErrDoc{},
	}
	for _, c := range d.RateChanges {
		doc.Rates = append(doc.Rates, rateChangeDoc{Link: link(c.Link),
			Current: rateDocOf(c.Current), Reference: rateDocOf(c.Reference)})
	}
	for _, c := range d.LIDChanges {
		lc := lidChangeDoc{LID: c.LID}
		if c.Current != 0 {
			g := mad.GUID(c.Current)
			lc.CurrentPortGUID = &g
		}
		if c.Reference != 0 {
			g := mad.GUID(c.Reference)
			lc.ReferencePortGUID = &g
		}
		doc.LIDs = append(doc.LIDs, lc)
	}
	doc.Complete, doc.Errors = fabricdoc.WalkErrorsDoc(r.cur)
	return doc
}
