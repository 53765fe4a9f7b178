package ibidsverify

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/internal/cli/cmdutil"
	"github.com/ibtool/ibtool/internal/cli/render"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/query"
)

// ibidsverify: infiniband-diags' ibidsverify.pl. It reads the fabric as
// `ibnetdiscover -g` prints it, from a file it keeps in
// /var/cache/infiniband-diags (written on first use or with -R, reused
// otherwise), and reports zero LIDs and LIDs, node GUIDs and port GUIDs
// that appear twice. ibtool writes and reads the same file and reads it
// with the script's own patterns, so its findings and their order are the
// script's, quirks included: GUIDs are compared as the text ibnetdiscover
// prints (a switch's port GUID in its short %x form), and the script's
// zero-GUID test compares that text with "0", so it never reports one.

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

// idsLID and idsGUID read the topology's texts for JSON (nil when they
// do not parse).
func idsLID(s string) *uint16 {
	n, err := strconv.ParseUint(s, 10, 16)
	if err != nil {
		return nil
	}
	v := uint16(n)
	return &v
}

func idsGUID(s string) *mad.GUID {
	n, err := strconv.ParseUint(strings.TrimPrefix(s, "0x"), 16, 64)
	if err != nil || !strings.HasPrefix(s, "0x") {
		return nil
	}
	g := mad.GUID(n)
	return &g
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
	text, err := idsTopology(env, opts, res)
	if err == nil {
		res.Problems = verifyIDs(text)
	}
	if err := cmdutil.Finish(env, c, "ibidsverify", res, err); err != nil {
		return err
	}
	if len(res.Problems) > 0 {
		return &cmdutil.ExitError{Code: 1, Err: cmdutil.ErrSilent}
	}
	return nil
}

// idsTopology is the fabric as ibnetdiscover -g prints it: the script's
// file (written first when missing or with -R), or the --load-cache
// fabric.
func idsTopology(env *cmdutil.Env, opts *ibidsverifyOptions, res *IdsResult) ([]byte, error) {
	c := &opts.Common
	if opts.src.LoadCache != "" {
		return idsRender(env, opts)
	}
	if err := os.MkdirAll(IdsCacheDir, 0o700); err != nil {
		return nil, fmt.Errorf("cannot create %s: %w", IdsCacheDir, err)
	}
	file := filepath.Join(IdsCacheDir, "ibnetdiscover-"+c.CA+"-"+c.Port+".topology")
	res.TopologyFile = file
	if !opts.regenerate {
		text, err := os.ReadFile(file)
		if err == nil || !errors.Is(err, os.ErrNotExist) {
			return text, err
		}
	}
	text, err := idsRender(env, opts)
	if err != nil {
		return nil, err
	}
	return text, os.WriteFile(file, text, 0o644)
}

// idsRender discovers the fabric (or loads --load-cache) and prints it as
// ibnetdiscover -g does.
func idsRender(env *cmdutil.Env, opts *ibidsverifyOptions) ([]byte, error) {
	f, err := cmdutil.NetdiscFabric(env, &opts.Common, &opts.src, nil)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	tp := render.NewTopoPrinter(f, opts.src.Names(env.IO.Err), false)
	tp.W = bufio.NewWriter(&buf)
	tp.Topology(true, false)
	return buf.Bytes(), tp.W.Flush()
}

// The script's patterns, as it applies them to each line (newline
// included; Go's leftmost-first matching picks the submatches Perl's
// backtracking does).
var (
	idsCAGUID      = cmdutil.LazyRegexp{Expr: `^caguid=(.*)`}
	idsRtGUID      = cmdutil.LazyRegexp{Expr: `^rtguid=(.*)`}
	idsSwGUID      = cmdutil.LazyRegexp{Expr: `^switchguid=(.*)`}
	idsSwGUIDPort  = cmdutil.LazyRegexp{Expr: `^switchguid=(.*)\((.*)\)`}
	idsSwitch      = cmdutil.LazyRegexp{Expr: `^Switch.*"S-(.*)"\s+# (.*) port.* lid (\d+) .*`}
	idsCA          = cmdutil.LazyRegexp{Expr: `^Ca.*`}
	idsRt          = cmdutil.LazyRegexp{Expr: `^Rt.*`}
	idsPeerSwitch  = cmdutil.LazyRegexp{Expr: `"S-(.*)# lid (\d+) .*`}
	idsPeerCA      = cmdutil.LazyRegexp{Expr: `^.*"H-(.*)# lid (\d+) .*`}
	idsPeerRouter  = cmdutil.LazyRegexp{Expr: `^.*"R-(.*)# lid (\d+) .*`}
	idsCAPortGUID  = cmdutil.LazyRegexp{Expr: `^\[(\d+)\]\((.*)\)`}
	idsLineBreaker = cmdutil.LazyRegexp{Expr: `[^\n]*\n|[^\n]+$`}
)

// idsState is the script's tables and the line being read.
type idsState struct {
	lids, nodeGUIDs, portGUIDs map[string]string // LID -> node GUID, GUID -> LID
	out                        []idsProblem
}

// verifyIDs reads topology text as ibidsverify.pl does and returns its
// findings in the order it prints them.
func verifyIDs(text []byte) []idsProblem {
	s := &idsState{lids: map[string]string{}, nodeGUIDs: map[string]string{}, portGUIDs: map[string]string{}}
	var nodeType, nodeGUID, portGUID, lid, firstPort string
	for _, lineb := range idsLineBreaker.Get().FindAll(text, -1) {
		line := string(lineb)
		if m := idsCAGUID.Get().FindStringSubmatch(line); m != nil {
			nodeGUID, nodeType = m[1], ""
		} else if m := idsRtGUID.Get().FindStringSubmatch(line); m != nil {
			nodeGUID, nodeType = m[1], ""
		}
		if m := idsSwGUID.Get().FindStringSubmatch(line); m != nil {
			nodeGUID, portGUID, nodeType = m[1], "", ""
		}
		if m := idsSwGUIDPort.Get().FindStringSubmatch(line); m != nil {
			nodeGUID, portGUID = m[1], "0x"+m[2]
		}
		if m := idsSwitch.Get().FindStringSubmatch(line); m != nil {
			nodeType, firstPort, lid = "switch", "yes", m[3]
			s.insertLID(lid, nodeGUID, nodeType)
			s.insertNodeGUID(lid, nodeGUID, nodeType)
			if portGUID != "" {
				s.insertPortGUID(lid, portGUID, nodeType, nodeGUID)
			}
		}
		if idsCA.Get().MatchString(line) {
			nodeType, firstPort = "ca", "yes"
		}
		if idsRt.Get().MatchString(line) {
			nodeType, firstPort = "router", "yes"
		}
		if nodeType != "ca" && nodeType != "router" {
			continue
		}
		for _, re := range []*regexp.Regexp{idsPeerSwitch.Get(), idsPeerCA.Get(), idsPeerRouter.Get()} {
			if m := re.FindStringSubmatch(line); m != nil {
				lid = m[2]
				s.insertLID(lid, nodeGUID, nodeType)
				if firstPort == "yes" {
					s.insertNodeGUID(lid, nodeGUID, nodeType)
					firstPort = "no"
				}
			}
		}
		if m := idsCAPortGUID.Get().FindStringSubmatch(line); m != nil {
			portGUID = "0x" + m[2]
			s.insertPortGUID(lid, portGUID, nodeType, nodeGUID)
		}
	}
	return s.out
}

func (s *idsState) report(p idsProblem, format string, args ...any) {
	p.Text = fmt.Sprintf(format, args...)
	s.out = append(s.out, p)
}

// insertLID: a LID must not be 0 (the script compares the text with "0")
// nor seen before.
func (s *idsState) insertLID(lid, nodeGUID, nodeType string) {
	if lid == "0" {
		s.report(idsProblem{Kind: "zero_lid", LID: idsLID(lid), NodeGUID: idsGUID(nodeGUID), NodeType: nodeType},
			"LID 0 found for %s NodeGUID %s\n", nodeType, nodeGUID)
		return
	}
	if first, ok := s.lids[lid]; ok {
		s.report(idsProblem{Kind: "duplicate_lid", LID: idsLID(lid), NodeGUID: idsGUID(nodeGUID), NodeType: nodeType, FirstNodeGUID: idsGUID(first)},
			"LID %s already defined for NodeGUID %s\n", lid, first)
		return
	}
	s.lids[lid] = nodeGUID
}

// (The script's zero-GUID test compares GUID text with the number 0, which
// Perl prints "0": no GUID text ever equals it, so there is none here.)

func (s *idsState) insertNodeGUID(lid, nodeGUID, nodeType string) {
	if first, ok := s.nodeGUIDs[nodeGUID]; ok {
		s.report(idsProblem{Kind: "duplicate_node_guid", LID: idsLID(lid), NodeGUID: idsGUID(nodeGUID), NodeType: nodeType, FirstLID: idsLID(first)},
			"NodeGUID %s already defined for LID %s\n", nodeGUID, first)
		return
	}
	s.nodeGUIDs[nodeGUID] = lid
}

func (s *idsState) insertPortGUID(lid, portGUID, nodeType, nodeGUID string) {
	if first, ok := s.portGUIDs[portGUID]; ok {
		s.report(idsProblem{Kind: "duplicate_port_guid", LID: idsLID(lid), PortGUID: idsGUID(portGUID), NodeGUID: idsGUID(nodeGUID), NodeType: nodeType, FirstLID: idsLID(first)},
			"PortGUID %s already defined for LID %s\n", portGUID, first)
		return
	}
	s.portGUIDs[portGUID] = lid
	if _, isNode := s.nodeGUIDs[portGUID]; nodeGUID != portGUID && isNode {
		s.report(idsProblem{Kind: "port_guid_is_node_guid", LID: idsLID(lid), PortGUID: idsGUID(portGUID), NodeGUID: idsGUID(nodeGUID), NodeType: nodeType},
			"PortGUID %s is an invalid duplicate of a NodeGUID\n", portGUID)
	}
}
