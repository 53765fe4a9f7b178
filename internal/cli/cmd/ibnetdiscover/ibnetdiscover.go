package ibnetdiscover

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/internal/cache"
	"github.com/ibtool/ibtool/internal/cli/cmdutil"
	"github.com/ibtool/ibtool/internal/cli/render"
	"github.com/ibtool/ibtool/internal/ctext"
	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/fabricdoc"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/nodename"
	"github.com/ibtool/ibtool/internal/query"
)

type ibnetdiscoverOptions struct {
	cmdutil.Common
	src                                  query.Source
	full, show, group, ports, reportHops bool
	list                                 int // ListCA... ; the last of -l/-H/-S/-R wins
	cacheFile, diffFile                  string
	diffFlags                            int
}

// NewCmd builds the ibnetdiscover command.
func NewCmd(env *cmdutil.Env, _ string) *cobra.Command {
	opts := &ibnetdiscoverOptions{diffFlags: render.DiffDefault}
	cmd := cmdutil.ToolCommand("ibnetdiscover [options] [topology-file]", "Discover the fabric and print its topology")
	cmd.Long = `Discover the InfiniBand fabric from the local port and print its topology
(or a node list, a port report, a diff against a cache). The walk runs many
SMPs in parallel; the output is in the order infiniband-diags prints it.
What does not answer is summarised on stderr and left out of the output.`
	cmd.Args = cobra.ArbitraryArgs // the C tool uses the first and ignores the rest
	fs := cmd.Flags()
	fs.BoolVarP(&opts.full, "full", "f", false, "show full information (ports' speed and width, vlcap)")
	fs.BoolVarP(&opts.show, "show", "s", false, "show more information")
	cmdutil.AddListFlag(fs, &opts.list, render.ListAll, "list", "l", "list of connected nodes")
	fs.BoolVarP(&opts.group, "grouping", "g", false, "show grouping")
	cmdutil.AddListFlag(fs, &opts.list, render.ListCA, "Hca_list", "H", "list of connected CAs")
	cmdutil.AddListFlag(fs, &opts.list, render.ListSwitch, "Switch_list", "S", "list of connected switches")
	cmdutil.AddListFlag(fs, &opts.list, render.ListRouter, "Router_list", "R", "list of connected routers")
	opts.src.AddFlags(fs, query.AllSourceFlags)
	fs.StringVar(&opts.cacheFile, "cache", "", "filename to cache ibnetdiscover data to")
	fs.StringVar(&opts.diffFile, "diff", "", "filename of ibnetdiscover cache to diff")
	// ibnetdiscover's --diffcheck keys (built here, not for every command).
	diffKeys := map[string]int{"sw": render.DiffSwitch, "ca": render.DiffCA, "router": render.DiffRouter, "port": render.DiffPort, "lid": render.DiffLID, "nodedesc": render.DiffNodeDesc}
	fs.Var(cmdutil.DiffCheck(&opts.diffFlags, diffKeys), "diffcheck", "specify checks to execute for --diff (sw,ca,router,port,lid,nodedesc)")
	fs.BoolVarP(&opts.ports, "ports", "p", false, "obtain a ports report")
	fs.BoolVarP(&opts.reportHops, "max_hops", "m", false, "report max hops discovered by the library")
	cmdutil.SetupCommon(env, cmd, &opts.Common, "DGKLs")
	cmd.RunE = func(c *cobra.Command, args []string) error { return runIbnetdiscover(env, opts, args) }
	return cmd
}

func runIbnetdiscover(env *cmdutil.Env, opts *ibnetdiscoverOptions, args []string) error {
	c := &opts.Common
	res := &topologyResult{opts: opts}
	err := cmdutil.CheckTimeout(c)
	if err == nil && len(args) > 0 {
		var file *os.File
		if file, err = os.Create(args[0]); err != nil {
			err = &cmdutil.Failure{CMsg: fmt.Sprintf("can't open file %s for writing", args[0]), Err: err}
		} else {
			defer file.Close()
			res.file = file
		}
	}
	if err == nil {
		res.names = opts.src.Names(env.IO.Err)
		err = res.discover(env)
	}
	if err := cmdutil.Finish(env, c, "ibnetdiscover", res, err); err != nil {
		return err
	}
	// After the output, as the C tool does: printing a CA cleans its
	// description, and the cache holds the cleaned text.
	if opts.cacheFile != "" {
		if err := cache.Write(opts.cacheFile, res.fab); err != nil {
			return cmdutil.Fail(env, c, "ibnetdiscover", cmdutil.NetdiscFailure("caching ibnetdiscover data failed", err, false))
		}
	}
	return cmdutil.WalkIncomplete(env, c, "ibnetdiscover", res.fab)
}

// topologyResult is ibnetdiscover's result: the fabric, as the report the
// options chose (topology, node list, ports report or diff). Its JSON is
// the fabric's document.
type topologyResult struct {
	opts     *ibnetdiscoverOptions
	names    *nodename.Map
	fab      *discovery.Fabric
	diff     *discovery.Fabric // the --diff cache
	progress strings.Builder   // -s: the walk's lines, printed even if it fails
	file     io.Writer         // the topology file; nil: stdout
}

func (r *topologyResult) discover(env *cmdutil.Env) error {
	o := r.opts
	if o.diffFile != "" {
		var err error
		if r.diff, err = query.LoadCache(o.diffFile); err != nil {
			return cmdutil.NetdiscFailure("loading cached fabric for diff failed", err, false)
		}
	}
	var found func(discovery.FoundEvent)
	if o.show {
		found = func(ev discovery.FoundEvent) { r.progress.WriteString(foundLine(ev)) }
	}
	fab, err := cmdutil.NetdiscFabric(env, &o.Common, &o.src, found)
	if err != nil {
		return err
	}
	r.fab = fab
	return nil
}

// MarshalJSON builds the fabric's document only when it is asked for: on
// a big fabric it is megabytes, and text output has no use for it.
func (r *topologyResult) MarshalJSON() ([]byte, error) {
	if r.fab == nil {
		return json.Marshal(nil)
	}
	return json.Marshal(fabricdoc.FabricJSON(r.fab, r.names, r.opts.list))
}

func (r *topologyResult) WriteText(w io.Writer) error {
	if _, err := io.WriteString(w, r.progress.String()); err != nil || r.fab == nil {
		return err
	}
	o := r.opts
	out := w
	if r.file != nil && !o.ports { // the ports report goes to stdout
		out = r.file
	}
	tp := render.NewTopoPrinter(r.fab, r.names, o.full)
	tp.W = bufio.NewWriter(out)
	switch {
	case o.ports:
		tp.PortsReport()
	case o.list != 0:
		tp.ListNodes(o.list)
	case r.diff != nil:
		tp.Diff(r.diff, o.diffFlags)
	default:
		tp.Topology(o.group, o.reportHops)
	}
	return tp.W.Flush()
}

// foundLine is libibnetdisc's show_progress line for a NodeInfo reply.
func foundLine(ev discovery.FoundEvent) string {
	prompt := "known"
	if ev.New {
		prompt = "new"
	}
	port := ev.Port
	if ev.Node.Type == discovery.NodeSwitch {
		port = 0
	}
	desc := ev.Desc
	if i := strings.IndexByte(string(desc), 0); i >= 0 {
		desc = desc[:i]
	}
	return fmt.Sprintf("DR path slid 0; dlid 0; %s -> %s %s {%016x} portnum %d lid %d-%d \"%s\"\n",
		mad.FormatDRPath(ev.Path), prompt, ctext.MadNodeType(ev.Node.Type), ev.Node.GUID, port,
		ev.BaseLID, int(ev.BaseLID)+(1<<ev.LMC)-1, desc)
}
