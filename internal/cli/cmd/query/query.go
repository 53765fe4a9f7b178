package query

// query: any Get of any attribute of any management class on any target
// (python-rdma's "ibtool query METHOD ATTRIBUTE [TARGET]").
//
// METHOD is SubnGet, PerformanceGet, SubnAdmGet, SubnAdmGetTable or
// CongestionGet (any case; python-rdma's subn_adm_get spelling too); the
// Set methods SubnSet, PerformanceSet, SubnAdmSet and CongestionSet need
// --write. ATTRIBUTE is the attribute's IBA name (PortInfo; python-rdma's
// SMPPortInfo, PMPortCounters, SAPathRecord work too) or its number
// (0x15) in the method's class. TARGET is any target (LID, GUID, GID, DR
// path with -D, node name); SMPs without one go to the local node (DR 0),
// GMPs to the local port's LID; the SA methods go to the SA and take none.
//
// -f NAME=VALUE sets a field of the request (dotted paths into nested
// structures: "PortInfo.LID", "GUIDInfo.GUID.2"); for the SA methods the
// fields set are the component mask. -f NAME (no "=") prints only that
// field of the reply; repeat it for several. -a is the attribute modifier
// (python-rdma's --attribute-id sets the modifier too).
//
// A Set reads the attribute first (same modifier and request fields),
// changes the -f fields, and sends it back, so that the fields not named
// keep their values; in a PortInfo the state, physical state and the
// enabled speeds and widths are sent as 0, "no change" (IBA 14.2.5.6),
// unless named. A SubnAdmSet sends the -f fields alone. The reply (the
// attribute as the agent now has it) is printed as a Get's; -v logs the
// write on stderr.
//
// Output: the reply printed by the generated printers: libibmad's dotted
// lines where the attribute has labels, the field dump otherwise;
// GetTable records each under "Reply structure #N".
//
// Bad input (exit 2, nothing sent): an unknown method, attribute or field
// names near matches; a method the attribute does not have; a Set
// without --write.
//
// JSON (--json): {"method", "attribute", "attribute_id", "modifier",
// "target" (docs/json.md's target; the SA's LID for the SA methods),
// "reply" (mad's encoding; only the selected fields with -f NAME) or
// "records" (SubnAdmGetTable)}.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/internal/cli/cmdutil"
	"github.com/ibtool/ibtool/internal/endport"
	"github.com/ibtool/ibtool/internal/jsonv"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/query"
	"github.com/ibtool/ibtool/internal/rpc"
)

type queryCmdOptions struct {
	cmdutil.Common
	fields   []string
	modifier string
	write    bool
	ccKey    string
}

// NewCmd builds the query command.
func NewCmd(env *cmdutil.Env, _ string) *cobra.Command {
	opts := &queryCmdOptions{}
	cmd := cmdutil.ToolCommand("query [options] <method> <attribute> [<target>]", "Get (or, with --write, set) any attribute of any class")
	cmd.Long = "query sends one Get of any attribute the wire description knows, in its management class,\n" +
		"to any target, and prints the reply with the generated printers.\n\n" +
		"Methods: " + strings.Join(queryMethodNames(), ", ") + " (the Set methods need --write).\n" +
		queryAttributeHelp()
	cmd.Example = `  query SubnGet PortInfo 2 -a 1             # PortInfo of port 1 at LID 2
  query SubnGet NodeInfo -D 0,1 -f NodeGUID  # one field of the node behind local port 1
  query PerformanceGet PortCounters 2 -f PortSelect=1
  query SubnAdmGetTable NodeRecord
  query SubnAdmGet PathRecord -f DLID=2 -f SLID=1
  query SubnSet PortInfo 1 -a 2 -f PortPhysicalState=2 --write`
	fs := cmd.Flags()
	fs.StringArrayVarP(&opts.fields, "field", "f", nil, "NAME=VALUE sets a request field; NAME alone prints only that reply field (repeatable)")
	fs.StringVarP(&opts.modifier, "attribute-id", "a", "", "attribute modifier of the request (python-rdma's name for it)")
	fs.BoolVar(&opts.write, "write", false, "allow a Set method: change the attribute at the target")
	fs.StringVar(&opts.ccKey, "cckey", "", "CC_Key of the congestion control methods (default 0)")
	cmdutil.SetupCommon(env, cmd, &opts.Common, "")
	cmd.RunE = func(c *cobra.Command, args []string) error {
		if len(args) < 2 || len(args) > 3 {
			return cmdutil.UsageErrorf("expected <method> <attribute> [<target>]")
		}
		res, err := runQuery(env, opts, args)
		return cmdutil.Finish(env, &opts.Common, "query", res, err)
	}
	return cmd
}

// queryMethod is a method query can send, and its class.
type queryMethod struct {
	name   string
	class  uint8
	method uint8
}

var queryMethods = []queryMethod{
	{"SubnGet", mad.ClassSubnLID, mad.MethodGet},
	{"PerformanceGet", mad.ClassPerf, mad.MethodGet},
	{"SubnAdmGet", mad.ClassSubnAdm, mad.MethodGet},
	{"SubnAdmGetTable", mad.ClassSubnAdm, mad.MethodGetTable},
	{"CongestionGet", mad.ClassCongest, mad.MethodGet},
	{"SubnSet", mad.ClassSubnLID, mad.MethodSet},
	{"PerformanceSet", mad.ClassPerf, mad.MethodSet},
	{"SubnAdmSet", mad.ClassSubnAdm, mad.MethodSet},
	{"CongestionSet", mad.ClassCongest, mad.MethodSet},
}

func queryMethodNames() []string {
	var names []string
	for _, m := range queryMethods {
		names = append(names, m.name)
	}
	return names
}

// lookupQueryMethod finds a method by name, any case, with or without
// python-rdma's underscores.
func lookupQueryMethod(name string) (queryMethod, error) {
	flat := strings.ReplaceAll(name, "_", "")
	for _, m := range queryMethods {
		if strings.EqualFold(m.name, flat) {
			return m, nil
		}
	}
	return queryMethod{}, cmdutil.UsageErrorf("unknown method %q%s", name, cmdutil.DidYouMean(name, queryMethodNames()))
}

// queryAttributeHelp lists the attributes of each class, for --help.
func queryAttributeHelp() string {
	var b strings.Builder
	for _, cl := range []struct {
		name  string
		class uint8
	}{{"Subn", mad.ClassSubnLID}, {"Performance", mad.ClassPerf}, {"SubnAdm", mad.ClassSubnAdm}, {"Congestion", mad.ClassCongest}} {
		var names []string
		for _, d := range classAttributes(cl.class) {
			names = append(names, d.Name)
		}
		fmt.Fprintf(&b, "\n%s attributes: %s.", cl.name, strings.Join(names, ", "))
	}
	return b.String()
}

// classAttributes lists the attributes class carries, by name.
func classAttributes(class uint8) []*mad.StructDesc {
	var out []*mad.StructDesc
	for _, d := range mad.Structs() {
		if d.IsAttribute && slices.Contains(d.Classes, class) {
			out = append(out, d)
		}
	}
	return out
}

// pythonAttrPrefixes are python-rdma's class prefixes of attribute names
// (SMPPortInfo, PMPortCounters, SAPathRecord, CCCongestionInfo).
var pythonAttrPrefixes = []string{"SMP", "PM", "SA", "CC"}

// lookupQueryAttr finds the attribute named name (or numbered) in m's
// class, and checks that it has m's method.
func lookupQueryAttr(m queryMethod, name string) (*mad.StructDesc, error) {
	attrs := classAttributes(m.class)
	var found *mad.StructDesc
	if id, err := endport.ParseUint(name, 16); err == nil {
		found = mad.LookupAttr(m.class, uint16(id))
	} else {
		for _, d := range attrs {
			if strings.EqualFold(d.Name, name) {
				found = d
			}
		}
		for _, p := range pythonAttrPrefixes {
			if found == nil && len(name) > len(p) && strings.EqualFold(name[:len(p)], p) {
				for _, d := range attrs {
					if strings.EqualFold(d.Name, name[len(p):]) {
						found = d
					}
				}
			}
		}
	}
	if found == nil {
		var names []string
		for _, d := range attrs {
			if slices.Contains(d.Methods, m.method) {
				names = append(names, d.Name)
			}
		}
		return nil, cmdutil.UsageErrorf("unknown attribute %q for %s%s", name, m.name, cmdutil.DidYouMean(name, names))
	}
	if !slices.Contains(found.Methods, m.method) {
		return nil, cmdutil.UsageErrorf("%s has no %s (its methods: %s)", found.Name, m.name, methodList(found))
	}
	return found, nil
}

func methodList(d *mad.StructDesc) string {
	var names []string
	for _, meth := range d.Methods {
		names = append(names, mad.MethodName(d.Classes[0], meth))
	}
	return strings.Join(names, ", ")
}

// queryRequest is the parsed -f list: the request with its fields set,
// the names set (for a SubnAdm component mask and a Set), and the reply
// fields to show.
type queryRequest struct {
	req    mad.Struct
	set    []string
	values []string // the texts of set
	show   []string
}

func parseQueryFields(desc *mad.StructDesc, fields []string) (*queryRequest, error) {
	q := &queryRequest{req: desc.New()}
	paths := mad.FieldPaths(desc)
	for _, f := range fields {
		name, value, isSet := strings.Cut(f, "=")
		if _, _, err := mad.FormatField(q.req, name); err != nil {
			return nil, cmdutil.UsageErrorf("unknown field %q of %s%s", name, desc.Name, cmdutil.DidYouMean(name, paths))
		}
		if !isSet {
			q.show = append(q.show, name)
			continue
		}
		if err := mad.SetText(q.req, name, value); err != nil {
			return nil, cmdutil.UsageErrorf("-f %s: %v", f, strings.TrimPrefix(err.Error(), "mad: "))
		}
		q.set, q.values = append(q.set, name), append(q.values, value)
	}
	return q, nil
}

// queryResult is query's result: its JSON, and the structures for the text.
type queryResult struct {
	Method      string            `json:"method"`
	Attribute   string            `json:"attribute"`
	AttributeID uint16            `json:"attribute_id"`
	Modifier    uint32            `json:"modifier"`
	Target      jsonv.Target      `json:"target"`
	Reply       json.RawMessage   `json:"reply,omitempty"`
	Records     []json.RawMessage `json:"records,omitempty"`

	replies  []mad.Struct
	table    bool
	show     []string
	showKeys bool
}

func (r *queryResult) WriteText(w io.Writer) error {
	var b strings.Builder
	for i, s := range r.replies {
		if r.table {
			fmt.Fprintf(&b, "Reply structure #%d\n", i)
		}
		b.WriteString(printStruct(s, r.show, r.showKeys))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// printStruct prints s with the generated printers: the fields in show, or
// all of them (libibmad's dotted lines where s has labels, the dump
// otherwise).
func printStruct(s mad.Struct, show []string, showKeys bool) string {
	if len(show) > 0 {
		var b strings.Builder
		for _, name := range show {
			label, value, _ := mad.FormatField(s, name) // names were checked
			if strings.Contains(value, "\n") {
				b.WriteString(label + ":\n" + value)
				continue
			}
			b.WriteString(mad.DottedLine(label, value) + "\n")
		}
		return b.String()
	}
	if text := mad.Dotted(s, &mad.DottedOptions{ShowKeys: showKeys}); text != "" {
		return text
	}
	return mad.Dump(s)
}

// replyJSON is s in mad's encoding, only the top-level keys of show when
// fields are selected.
func replyJSON(s mad.Struct, show []string, showKeys bool) json.RawMessage {
	doc := mad.JSON(s, showKeys)
	if len(show) == 0 {
		return doc
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(doc, &all); err != nil {
		return doc
	}
	keep := map[string]json.RawMessage{}
	for _, name := range show {
		top, _, _ := strings.Cut(strings.ReplaceAll(name, "[", "."), ".")
		if f := s.Desc().Field(top); f != nil {
			for k, v := range all {
				if k == f.JSONName || strings.HasPrefix(k, f.JSONName+"_") {
					keep[k] = v
				}
			}
		}
	}
	out, _ := json.Marshal(keep)
	return out
}

func runQuery(env *cmdutil.Env, opts *queryCmdOptions, args []string) (cmdutil.Result, error) {
	m, err := lookupQueryMethod(args[0])
	if err != nil {
		return nil, err
	}
	desc, err := lookupQueryAttr(m, args[1])
	if err != nil {
		return nil, err
	}
	q, err := parseQueryFields(desc, opts.fields)
	if err != nil {
		return nil, err
	}
	var mod uint32
	if opts.modifier != "" {
		n, err := endport.ParseUint(opts.modifier, 32)
		if err != nil {
			return nil, cmdutil.UsageErrorf("invalid attribute modifier %q: %v", opts.modifier, err)
		}
		mod = uint32(n)
	}
	var w *query.Write
	if m.method == mad.MethodSet {
		if !opts.write {
			return nil, cmdutil.UsageErrorf("%s changes %s at the target: add --write to send it", m.name, desc.Name)
		}
		w = &query.Write{By: "query " + m.name + " --write"}
	}
	if m.class == mad.ClassSubnAdm && len(args) > 2 {
		return nil, cmdutil.UsageErrorf("%s goes to the SA: it takes no target", m.name)
	}
	o, err := cmdutil.QueryOptions(env, &opts.Common)
	if err != nil {
		return nil, err
	}
	if opts.ccKey != "" {
		if o.CCKey, err = endport.ParseUint(opts.ccKey, 64); err != nil {
			return nil, cmdutil.UsageErrorf("invalid CC key %q: %v", opts.ccKey, err)
		}
	}
	eng, err := cmdutil.OpenEngine(env, &opts.Common, cmdutil.EngineConfig{Timeout: rpc.DefaultTimeout})
	if err != nil {
		return nil, err
	}
	defer eng.Close()
	c := query.New(eng, o)
	run := &queryRun{c: c, ctx: context.Background(), m: m, desc: desc, q: q, mod: mod, w: w, showKeys: opts.ShowKeys}
	res := &queryResult{Method: m.name, Attribute: desc.Name, AttributeID: desc.AttrID, Modifier: mod, show: q.show, showKeys: opts.ShowKeys}
	if m.class == mad.ClassSubnAdm {
		return res, run.sa(res)
	}
	target := ""
	if len(args) > 2 {
		target = args[2]
	}
	d, err := run.dest(&opts.Common, target)
	if err != nil {
		return nil, err
	}
	res.Target = cmdutil.DestTarget(d, d.String())
	return res, run.attr(res, d)
}

// queryRun is one query: the request and where it goes.
type queryRun struct {
	c        *query.Client
	ctx      context.Context
	m        queryMethod
	desc     *mad.StructDesc
	q        *queryRequest
	mod      uint32
	w        *query.Write
	showKeys bool
}

// dest resolves the target: an SMP route, or a GMP address; the local
// node (SMPs) or port (GMPs) when none is given.
func (r *queryRun) dest(cm *cmdutil.Common, target string) (query.Dest, error) {
	if r.m.class == mad.ClassSubnLID {
		if target == "" {
			return query.DR([]byte{0}), nil
		}
		return cmdutil.IBResolve(r.ctx, r.c, cm, target)
	}
	if target == "" {
		local, err := r.c.Local()
		if err != nil {
			return query.Dest{}, fmt.Errorf("reading the local port: %w", err)
		}
		d, _ := r.c.GMPDestOrLID(r.ctx, local.LID) // the C tools' fallback: the LID on SL 0
		return d, nil
	}
	t, err := endport.ParseTargetOrName(target, cm.TypeFlags())
	if err != nil {
		return query.Dest{}, cmdutil.UsageErrorf("invalid target %q: %v", target, err)
	}
	return r.c.GMPDest(r.ctx, t)
}

// attr does a Get, or a read-modify-write Set, of an SMP or GMP attribute.
func (r *queryRun) attr(res *queryResult, d query.Dest) error {
	class := r.m.class
	if class == mad.ClassSubnLID {
		class = 0 // Get and Set pick LID or DR routed SMPs from d
	}
	got := r.desc.New()
	var err error
	if class == 0 {
		err = r.c.Get(r.ctx, d, r.mod, r.q.req, got)
	} else {
		err = r.c.GetClass(r.ctx, class, d, r.mod, r.q.req, got)
	}
	if err != nil {
		return fmt.Errorf("%s %s at %s: %w", mad.MethodName(r.m.class, mad.MethodGet), r.desc.Name, d, err)
	}
	if r.w != nil {
		if got, err = r.set(class, d, got); err != nil {
			return err
		}
	}
	res.replies = []mad.Struct{got}
	res.Reply = replyJSON(got, r.q.show, r.showKeys)
	return nil
}

// set writes the -f fields over cur, the attribute as read, and returns
// the agent's reply.
func (r *queryRun) set(class uint8, d query.Dest, cur mad.Struct) (mad.Struct, error) {
	raw := &query.Raw{Struct: cur, Bytes: mad.Encode(cur)}
	if pi, ok := cur.(*mad.PortInfo); ok {
		// 0 is "no change" for these (IBA 14.2.5.6): writing back the
		// values read would ask for a transition.
		pi.PortState, pi.PortPhysicalState = 0, 0
		pi.LinkSpeedEnabled, pi.LinkWidthEnabled, pi.LinkSpeedExtEnabled = 0, 0, 0
	}
	for i, name := range r.q.set {
		if err := mad.SetText(cur, name, r.q.values[i]); err != nil {
			return nil, err // cannot happen: the request took it
		}
	}
	after := r.desc.New()
	var err error
	if class == 0 {
		err = r.c.Set(r.ctx, r.w, d, r.mod, raw, after)
	} else {
		err = r.c.SetClass(r.ctx, r.w, class, d, r.mod, raw, after)
	}
	if err != nil {
		return nil, fmt.Errorf("%s %s at %s: %w", r.m.name, r.desc.Name, d, err)
	}
	return after, nil
}

// sa does a SubnAdmGet, GetTable or Set with the -f fields as the
// component mask.
func (r *queryRun) sa(res *queryResult) error {
	mask, err := mad.CompMask(r.desc, r.q.set...)
	if err != nil {
		return cmdutil.UsageErrorf("%v", strings.TrimPrefix(err.Error(), "mad: "))
	}
	resolver, err := r.c.Resolver()
	if err != nil {
		return err
	}
	if resolver.SA == nil {
		return fmt.Errorf("the local port has no subnet manager to ask")
	}
	addr := resolver.SA.Addr()
	res.Target = cmdutil.DestTarget(query.GMPAddr(addr), fmt.Sprintf("Lid %d", addr.LID))
	var recs [][]byte
	switch r.m.method {
	case mad.MethodGet:
		var rec []byte
		rec, err = resolver.SA.Get(r.ctx, r.desc.AttrID, mad.Encode(r.q.req), mask)
		recs = [][]byte{rec}
	case mad.MethodGetTable:
		res.table = true
		recs, err = resolver.SA.GetTable(r.ctx, r.desc.AttrID, mad.Encode(r.q.req), mask)
	case mad.MethodSet:
		after := r.desc.New()
		if err = r.c.SetSA(r.ctx, r.w, r.q.req, mask, after); err == nil {
			recs = [][]byte{mad.Encode(after)}
		}
	}
	if err != nil {
		return fmt.Errorf("%s %s: %w", r.m.name, r.desc.Name, err)
	}
	for _, b := range recs {
		s := r.desc.New()
		if err := s.Unmarshal(b); err != nil {
			return fmt.Errorf("%s %s: decoding the reply: %w", r.m.name, r.desc.Name, err)
		}
		res.replies = append(res.replies, s)
		if res.table {
			res.Records = append(res.Records, replyJSON(s, r.q.show, r.showKeys))
		} else {
			res.Reply = replyJSON(s, r.q.show, r.showKeys)
		}
	}
	if res.table && res.Records == nil {
		res.Records = []json.RawMessage{}
	}
	return nil
}
