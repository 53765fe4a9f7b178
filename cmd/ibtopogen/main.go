// Command ibtopogen writes an ibsim net file for a simulated fabric of the
// shape you ask for: a two- or three-level fat tree, or a mesh or torus
// of switches, with hosts on the edge switches (dual-rail if asked), one
// width and speed for every link and ibsim port options for some, and a
// seed for the irregular shapes. It also says which ibsim -N/-S/-P flags
// a big fabric needs. Run the result with `ibsim -s <file>` (see
// docs/ibsim-protocol.md) and OpenSM, as internal/simfabric does.
//
//	ibtopogen -preset S1000 -o s1000.net
//	ibtopogen -preset S10000 -ibsim-flags      # prints: -N 16384 -S 2048 -P 65536
//	ibtopogen fattree2 -leaves 8 -spines 4 -hosts 16 -dual-rail
//	ibtopogen fattree3 -pods 2 -leaves-per-pod 4 -aggs-per-pod 4 -cores 8 -hosts 8
//	ibtopogen mesh -rows 4 -cols 4 -torus -hosts 2 -drop-links 3 -seed 7
//	ibtopogen fattree2 -leaves 4 -spines 2 -hosts 8 -speed HDR -link 'leaf01[9] w=1 s=1'
package main

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/ibtool/ibtool/internal/topogen"
)

func main() {
	err := run(os.Args[1:], os.Stdout, os.Stderr)
	switch {
	case errors.Is(err, flag.ErrHelp):
	case err != nil:
		fmt.Fprintf(os.Stderr, "ibtopogen: %v\n", err)
		os.Exit(2)
	}
}

// guidFlag is a GUID flag, shown in hex.
type guidFlag struct{ p *uint64 }

func (g guidFlag) String() string {
	if g.p == nil {
		return ""
	}
	return fmt.Sprintf("%#016x", *g.p)
}

func (g guidFlag) Set(v string) error {
	n, err := strconv.ParseUint(v, 0, 64)
	if err != nil || n == 0 {
		return errors.New("want a non-zero number, e.g. 0x7cfe900300300000")
	}
	*g.p = n
	return nil
}

// linkOptions collects the repeated -link flags.
type linkOptions []string

func (l *linkOptions) String() string     { return strings.Join(*l, "; ") }
func (l *linkOptions) Set(v string) error { *l = append(*l, v); return nil }

func run(args []string, stdout, stderr io.Writer) error {
	kind := ""
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		kind, args = args[0], args[1:]
	}
	// A preset's values are the defaults of the flags that change it: a
	// first pass finds the preset, a second parses the flags over it.
	o, err := parseFlags(args, topogen.Spec{Hosts: 2, Rows: 3, Cols: 3, Seed: 1})
	if err == nil && o.preset != "" {
		p, perr := topogen.PresetSpec(o.preset)
		if perr != nil {
			return perr
		}
		o, err = parseFlags(args, p)
	}
	if errors.Is(err, flag.ErrHelp) {
		o.fs.SetOutput(stderr)
		o.fs.Usage()
	}
	if err != nil {
		return err
	}
	s := o.spec
	switch {
	case o.preset != "" && kind != "":
		return fmt.Errorf("-preset %s and the shape %s: give one", o.preset, kind)
	case o.preset == "" && kind == "":
		return errors.New("give -preset NAME or a shape: fattree2, fattree3 or mesh (-h lists the flags)")
	case kind != "":
		s.Kind = kind
	}
	fab, err := topogen.Generate(s)
	if err != nil {
		return err
	}
	for _, l := range o.links {
		where, opts, _ := strings.Cut(strings.TrimSpace(l), " ")
		if err := fab.SetOptions(where, opts); err != nil {
			return fmt.Errorf("-link: %w", err)
		}
	}
	if o.ibsimFlags {
		_, err := fmt.Fprintln(stdout, strings.Join(fab.IbsimFlags(), " "))
		return err
	}
	c := fab.Counts()
	flags := strings.Join(fab.IbsimFlags(), " ")
	fmt.Fprintf(stderr, "ibtopogen: %d switches, %d CAs, %d links; ibsim flags: %s\n", c.Switches, c.CAs, c.Links, cmp.Or(flags, "(none)"))
	if o.out != "" {
		return fab.WriteFile(o.out)
	}
	_, err = fab.WriteTo(stdout)
	return err
}

// options are the parsed command line.
type options struct {
	fs         *flag.FlagSet
	spec       topogen.Spec
	preset     string
	out        string
	ibsimFlags bool
	links      linkOptions
}

// parseFlags parses the flags over the defaults in spec. It prints
// nothing: an error is one line, which main prints.
func parseFlags(args []string, spec topogen.Spec) (*options, error) {
	o := &options{spec: spec}
	s := &o.spec
	fs := flag.NewFlagSet("ibtopogen", flag.ContinueOnError)
	o.fs = fs
	fs.SetOutput(io.Discard)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: ibtopogen -preset NAME [flags]\n"+
			"       ibtopogen fattree2|fattree3|mesh [flags]\n"+
			"Writes an ibsim net file (to stdout or -o). Flags given with a preset change it.\n"+
			"Presets: %s.\n", strings.Join(topogen.PresetNames(), ", "))
		fs.PrintDefaults()
	}
	fs.StringVar(&o.preset, "preset", "", "a named fabric (the tests' and the bench's)")
	fs.StringVar(&o.out, "o", "", "write the net file here instead of stdout")
	fs.BoolVar(&o.ibsimFlags, "ibsim-flags", false, "print only the ibsim -N/-S/-P flags the fabric needs (an empty line if none)")
	fs.Var(&o.links, "link", "'NODE[PORT] w=N s=N e=N': ibsim port `options` for the link on that port, on both ends (repeatable)")

	fs.IntVar(&s.Leaves, "leaves", s.Leaves, "fattree2: leaf switches")
	fs.IntVar(&s.Spines, "spines", s.Spines, "fattree2: spine switches")
	fs.IntVar(&s.Links, "links", max(s.Links, 1), "fattree2: cables per leaf-spine pair; mesh: per neighbour pair")
	fs.BoolVar(&s.UplinksHigh, "uplinks-high", s.UplinksHigh, "fattree2: uplinks on the leaves' highest ports")
	fs.IntVar(&s.Pods, "pods", s.Pods, "fattree3: pods")
	fs.IntVar(&s.LeavesPerPod, "leaves-per-pod", s.LeavesPerPod, "fattree3: leaf switches per pod")
	fs.IntVar(&s.AggsPerPod, "aggs-per-pod", s.AggsPerPod, "fattree3: aggregation switches per pod")
	fs.IntVar(&s.Cores, "cores", s.Cores, "fattree3: core switches, in aggs-per-pod groups")
	fs.IntVar(&s.LeafAggLinks, "leaf-agg-links", max(s.LeafAggLinks, 1), "fattree3: cables per leaf-aggregation pair")
	fs.IntVar(&s.AggCoreLinks, "agg-core-links", max(s.AggCoreLinks, 1), "fattree3: cables per aggregation-core pair")
	fs.IntVar(&s.Rows, "rows", s.Rows, "mesh: rows of switches")
	fs.IntVar(&s.Cols, "cols", s.Cols, "mesh: columns of switches")
	fs.BoolVar(&s.Torus, "torus", s.Torus, "mesh: wrap-around links")
	fs.IntVar(&s.DropLinks, "drop-links", s.DropLinks, "mesh: switch links to take out (the mesh stays connected)")
	fs.IntVar(&s.ExtraLinks, "extra-links", s.ExtraLinks, "mesh: switch links to add between random switches")
	fs.BoolVar(&s.Jitter, "jitter", s.Jitter, "mesh: one host more or less on random switches")
	fs.IntVar(&s.Hosts, "hosts", s.Hosts, "hosts per leaf (fat trees) or per switch (mesh)")
	fs.BoolVar(&s.DualRail, "dual-rail", s.DualRail, "cable every host's port 2 to the next edge switch")
	fs.IntVar(&s.HCAPorts, "hca-ports", s.HCAPorts, "ports per CA (0: 1, or 2 with -dual-rail)")
	fs.IntVar(&s.Radix, "radix", s.Radix, "ports per switch (0: 36, or 16 for a mesh)")
	fs.IntVar(&s.Width, "width", cmp.Or(s.Width, 4), "every link's width: 1, 2, 4, 8 or 12")
	fs.StringVar(&s.Speed, "speed", cmp.Or(s.Speed, "EDR"), "every link's speed: "+strings.Join(topogen.Speeds, ", "))
	fs.IntVar(&s.Degrade, "degrade", s.Degrade, "random switch links that get the -degrade-options")
	fs.StringVar(&s.DegradeOptions, "degrade-options", cmp.Or(s.DegradeOptions, "w=1"), "ibsim port options of the degraded links")
	fs.Uint64Var(&s.Seed, "seed", s.Seed, "seed of the random choices")
	s.SwitchGUID = cmp.Or(s.SwitchGUID, topogen.DefaultSwitchGUID)
	s.CAGUID = cmp.Or(s.CAGUID, topogen.DefaultCAGUID)
	fs.Var(guidFlag{&s.SwitchGUID}, "switch-guid", "`GUID` of the first switch")
	fs.Var(guidFlag{&s.CAGUID}, "ca-guid", "node `GUID` of the first CA")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected %q (the shape comes first: ibtopogen fattree2 -leaves 4 ...)", fs.Arg(0))
	}
	return o, nil
}
