package query

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/ibtool/ibtool/internal/cache"
	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/nodename"
	"github.com/ibtool/ibtool/internal/sa"
)

// Source is where a fabric-wide command gets its fabric: an ibnetdiscover
// cache (--load-cache), the SA's records (--sa, --discovery SA), or a live
// SMP walk (LID or DR routed, -o SMPs in flight). Its flags are registered
// here, once, for every command that has them.
type Source struct {
	LoadCache   string
	SA          bool
	Discovery   string // "", LID, DR or SA
	Outstanding string // -o: SMPs in flight, "" for the engine's window
	NodeNameMap string
	// MlxEPI asks the walk for Mellanox's MlnxExtPortInfo (ibdiag.conf
	// MLX_EPI, on by default in infiniband-diags 44).
	MlxEPI bool
}

// SourceFlags chooses which of the source's flags a command has.
type SourceFlags uint8

const (
	FlagLoadCache SourceFlags = 1 << iota
	FlagSA
	FlagOutstanding
	FlagNodeNameMap
	AllSourceFlags = FlagLoadCache | FlagSA | FlagOutstanding | FlagNodeNameMap
)

// AddFlags registers the flags in which.
func (s *Source) AddFlags(fs *pflag.FlagSet, which SourceFlags) {
	if which&FlagNodeNameMap != 0 {
		fs.StringVar(&s.NodeNameMap, "node-name-map", "", "node name map file")
	}
	if which&FlagLoadCache != 0 {
		fs.StringVar(&s.LoadCache, "load-cache", "", "filename of ibnetdiscover cache to load")
	}
	if which&FlagOutstanding != 0 {
		fs.StringVarP(&s.Outstanding, "outstanding_smps", "o", "", "SMPs in flight during the walk (default: the engine's window)")
	}
	if which&FlagSA != 0 {
		fs.BoolVar(&s.SA, "sa", false, "read the fabric from the SA's records instead of walking it with SMPs")
		fs.StringVar(&s.Discovery, "discovery", "", "LID or DR: how SMPs reach known nodes (default: LID when the local port is Active); SA: as --sa")
	}
}

// UsageError is a source option that makes no sense.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// Mode checks --sa and --discovery and says how the fabric is read.
func (s *Source) Mode() (mode discovery.Mode, useSA bool, err error) {
	switch strings.ToUpper(s.Discovery) {
	case "":
	case "LID":
		mode = discovery.ModeLID
	case "DR":
		mode = discovery.ModeDR
	case "SA":
		useSA = true
	default:
		return 0, false, &UsageError{fmt.Sprintf("invalid --discovery %q: LID, DR or SA", s.Discovery)}
	}
	if s.SA && s.Discovery != "" && !useSA {
		return 0, false, &UsageError{fmt.Sprintf("--sa reads the SA's records: it cannot be combined with --discovery %s", s.Discovery)}
	}
	return mode, useSA || s.SA, nil
}

// Window is -o: the SMPs in flight the walk's engine should allow, 0 for
// the engine's default.
func (s *Source) Window() int {
	if n, err := strconv.ParseUint(s.Outstanding, 0, 16); err == nil && n > 0 {
		return int(n)
	}
	return 0
}

// Live reports whether the source needs the fabric (no cache to read).
func (s *Source) Live() bool { return s.LoadCache == "" }

// Names opens the node-name-map (warnings about it go to warn).
func (s *Source) Names(warn io.Writer) *nodename.Map { return nodename.Open(s.NodeNameMap, warn) }

// Walk tunes a live walk.
type Walk struct {
	Found    func(discovery.FoundEvent)
	Progress func(discovery.Progress)
	// Skip is what the walk need not read: the command reads it later,
	// of the few nodes it needs it of.
	Skip discovery.Load
	// NoChassis: the command uses neither chassis nor external port
	// numbers, so the fabric need not be grouped into chassis
	// (discovery.Options.NoChassis). A cache keeps the numbers it holds.
	NoChassis bool
}

// SourceError is a fabric that could not be had; Op is the C tools'
// words for the step ("loading cached fabric", "discover").
type SourceError struct {
	Op  string
	Err error
}

func (e *SourceError) Error() string { return e.Op + " failed: " + e.Err.Error() }
func (e *SourceError) Unwrap() error { return e.Err }

// Fabric reads the fabric from the source. c is the client to walk with;
// it may be nil when the source is a cache.
func (s *Source) Fabric(ctx context.Context, c *Client, w Walk) (*discovery.Fabric, error) {
	if s.LoadCache != "" {
		f, err := loadCache(s.LoadCache, !w.NoChassis)
		if err != nil {
			return nil, &SourceError{"loading cached fabric", err}
		}
		return f, nil
	}
	mode, useSA, err := s.Mode()
	if err != nil {
		return nil, err
	}
	var f *discovery.Fabric
	if useSA {
		f, err = c.DiscoverSA(ctx)
	} else {
		f, err = discovery.Discover(ctx, c.eng, discovery.Options{
			Mode: mode, Load: s.load() &^ w.Skip, MKey: c.opts.MKey, Found: w.Found, Progress: w.Progress,
			NoChassis: w.NoChassis,
		})
	}
	if err != nil {
		return nil, &SourceError{"discover", err}
	}
	return f, nil
}

// Scan is a partial walk (iblinkinfo/ibnetdiscover -S, -D, -n): opts'
// Load and MKey are filled from the source and the client.
func (s *Source) Scan(ctx context.Context, c *Client, opts discovery.ScanOptions) (*discovery.Fabric, error) {
	opts.Load, opts.MKey = s.load(), c.opts.MKey
	return discovery.Scan(ctx, c.eng, opts)
}

func (s *Source) load() discovery.Load {
	l := discovery.LoadAll
	if !s.MlxEPI {
		l &^= discovery.LoadMlnxExtPortInfo
	}
	return l
}

// DiscoverSA reads the whole fabric from the SA's records.
func (c *Client) DiscoverSA(ctx context.Context) (*discovery.Fabric, error) {
	r, err := c.resolverWithSA()
	if err != nil {
		return nil, err
	}
	return discovery.DiscoverSA(ctx, r.SA, discovery.SALocal{PortGUID: r.Local.PortGUID, PortNum: r.Local.Num})
}

// NodeSA reads one node from the SA's records: the node with its ports
// and SwitchInfo, and the peer at the far end of each link (python-rdma's
// ibprint* --sa). A GUID the SA does not know is discovery.ErrNodeNotFound.
func (c *Client) NodeSA(ctx context.Context, guid uint64) (*discovery.Fabric, error) {
	r, err := c.resolverWithSA()
	if err != nil {
		return nil, err
	}
	noRecords := func(err error) bool { return errors.Is(err, sa.ErrNoRecords) }
	return discovery.NodeSA(ctx, r.SA, guid, noRecords)
}

// resolverWithSA is the client's resolver, which must have an SA to ask.
func (c *Client) resolverWithSA() (*sa.Resolver, error) {
	r, err := c.Resolver()
	if err != nil {
		return nil, err
	}
	if r.SA == nil {
		return nil, fmt.Errorf("%s port %d has no subnet manager to ask", r.Local.CA, r.Local.Num)
	}
	return r, nil
}

// RouteToLID is the directed route a LID-routed SMP takes from the local
// port to lid, followed switch by switch with the client's M_Key
// (discovery.RouteToLID): how iblinkinfo -S starts its partial scan.
func (c *Client) RouteToLID(ctx context.Context, lid uint16) ([]byte, error) {
	return discovery.RouteToLID(ctx, c.eng, lid, c.opts.MKey)
}

// LoadCache reads an ibnetdiscover cache file (and its companion file),
// and redoes the chassis grouping, as libibnetdisc does after a load.
func LoadCache(path string) (*discovery.Fabric, error) { return loadCache(path, true) }

func loadCache(path string, group bool) (*discovery.Fabric, error) {
	f, err := cache.Read(path)
	if err != nil {
		return nil, err
	}
	if group {
		discovery.GroupNodes(f)
	}
	return f, nil
}
