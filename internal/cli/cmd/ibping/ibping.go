package ibping

// ibping: ping a port with the OFA ping vendor MAD (class 0x32, OUI
// 0x001405), or answer such pings (-S), as infiniband-diags 44's ibping.
//
// Client: one Get a second (-f: back to back, without the per-reply
// lines), -c of them (default: until interrupted). Each reply carries the
// responder's "host.domain"; the output is the C tool's:
//
//	Pong from vm.(none) (Lid 3): time 0.028 ms
//	...
//	--- vm.(none) (Lid 3) ibping statistics ---
//	2 packets transmitted, 2 received, 0% packet loss, time 2000 ms
//	rtt min/avg/max = 0.025/0.026/0.028 ms
//
// SIGINT and SIGTERM end the run with the statistics and exit 0, as in the
// C tool. (Under ibsim the simulator transport's own handler also closes
// the port and exits 130.) A lost ping is a line on stderr (the C tool's
// libibmad writes one too) and counts in the loss; the exit code is 0
// whatever the loss.
//
// The ping travels on the SA's PathRecord path (SL, P_Key); for a LID the
// SA has no path to, ibtool pings the LID directly (SL 0), as the C tool
// always does, so an unreachable LID shows as loss. On a RoCE port (no
// SM, SA or LIDs) the target must be a GID, e.g. the peer's fe80:: GID,
// and the ping goes straight to it in a GRH; the server answers with the
// request's GRH mirrored.
//
// Server (-S): answers every request of the class whose OUI is -o's with
// this host's "hostname.domainname" (glibc's gethostname and
// getdomainname: "(none)" when no NIS domain is set), until interrupted.
// The kernel delivers requests to a registered agent; ibsim only to a
// client connected as SM on a node without one (SIM_SET_ISSM=1
// SIM_HOST=<node>), which ibtool asks for and explains when missing.
//
// Times are real milliseconds with microsecond resolution. The C tool's
// clock mixes units (seconds in microseconds plus nanoseconds / 10000), so
// its times are about ten times too small, and a ping that crosses a
// second boundary shows as about 1000 ms; ibtool does not copy that.
//
// Deliberate differences: -c and -o must be numbers; the server refuses to
// start where requests cannot reach it (C registers and waits forever).
//
// JSON (--json, client): {"target" (docs/json.md's target; text
// portid2str), "host" (the first responder's "host.domain"),
// "transmitted", "received", "loss_percent", "time_ms", "rtt_min_ms",
// "rtt_avg_ms", "rtt_max_ms", "pongs" [{"seq", "host", "rtt_ms"}, or
// {"seq", "error"} for a lost one]}.

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/internal/cli/cmdutil"
	"github.com/ibtool/ibtool/internal/endport"
	"github.com/ibtool/ibtool/internal/jsonv"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/rpc"
	"github.com/ibtool/ibtool/internal/umad"
	"github.com/ibtool/ibtool/internal/vendormad"
)

type ibpingOptions struct {
	cmdutil.Common
	count, oui    string
	flood, server bool
}

// NewCmd builds the ibping command.
func NewCmd(env *cmdutil.Env, _ string) *cobra.Command {
	opts := &ibpingOptions{}
	cmd := cmdutil.ToolCommand("ibping [options] <dest lid|guid>", "Ping a port with vendor MADs, or answer pings (-S)")
	cmd.Example = `  ibping -c 3 12         # three pings to LID 12
  ibping -G 0x2c9000100d051  # by port GUID, until interrupted
  ibping -S              # answer pings on the local port`
	fs := cmd.Flags()
	fs.StringVarP(&opts.count, "count", "c", "", "stop after count packets")
	fs.BoolVarP(&opts.flood, "flood", "f", false, "flood destination")
	fs.StringVarP(&opts.oui, "oui", "o", "", "use specified OUI number")
	fs.BoolVarP(&opts.server, "Server", "S", false, "start in server mode")
	cmdutil.SetupCommon(env, cmd, &opts.Common, "DKy")
	cmd.RunE = func(c *cobra.Command, args []string) error {
		if len(args) == 0 && !opts.server {
			return cmdutil.UsageErrorf("expected <dest lid|guid> (or -S)")
		}
		res, err := runIbping(c.Context(), env, opts, args)
		return cmdutil.Finish(env, &opts.Common, "ibping", res, err)
	}
	return cmd
}

// IbpingResult is ibping's result: the statistics (its text) and, in
// JSON, every ping. The "Pong from" lines are not in it: they are printed
// as the replies come, a second apart.
type IbpingResult struct {
	Target      jsonv.Target `json:"target"`
	Host        string       `json:"host"`
	Transmitted int          `json:"transmitted"`
	Received    int          `json:"received"`
	LossPercent int          `json:"loss_percent"`
	TimeMS      int64        `json:"time_ms"`
	RTTMinMS    float64      `json:"rtt_min_ms"`
	RTTAvgMS    float64      `json:"rtt_avg_ms"`
	RTTMaxMS    float64      `json:"rtt_max_ms"`
	Pongs       []ibpingPong `json:"pongs"`
	// The round trip times in µs, as the text prints them.
	RTTMinUS, RTTAvgUS, RTTMaxUS int64 `json:"-"`
}

type ibpingPong struct {
	Seq   int     `json:"seq"`
	Host  string  `json:"host,omitempty"`
	RTTMS float64 `json:"rtt_ms,omitempty"`
	Error string  `json:"error,omitempty"`
}

func (r *IbpingResult) WriteText(w io.Writer) error {
	_, err := fmt.Fprintf(w, "\n--- %s (%s) ibping statistics ---\n"+
		"%d packets transmitted, %d received, %d%% packet loss, time %d ms\n"+
		"rtt min/avg/max = %s/%s/%s ms\n",
		r.Host, r.Target.Text, r.Transmitted, r.Received, r.LossPercent, r.TimeMS,
		msec(r.RTTMinUS), msec(r.RTTAvgUS), msec(r.RTTMaxUS))
	return err
}

func runIbping(ctx context.Context, env *cmdutil.Env, opts *ibpingOptions, args []string) (cmdutil.Result, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	count := uint64(1<<32 - 1) // the C tool's ~0 as unsigned
	if opts.count != "" {
		n, err := endport.ParseUint(opts.count, 32)
		if err != nil {
			return nil, cmdutil.UsageErrorf("invalid count %q: %v", opts.count, err)
		}
		count = n
	}
	oui, err := cmdutil.VendorOUI(opts.oui)
	if err != nil {
		return nil, err
	}
	if !opts.server {
		cmdutil.ScopeLocalPort(&opts.Common, args[0])
	}
	client, err := cmdutil.IBOpenClient(env, &opts.Common, cmdutil.EngineConfig{Timeout: rpc.DefaultTimeout})
	if err != nil {
		return nil, err
	}
	defer client.Engine().Close()
	if opts.server {
		host := vendormad.HostAndDomain(mad.OFAPingSize)
		return nil, cmdutil.VendorServe(ctx, client.Engine(), "ibping", mad.ClassVendorOFA, oui, func(req mad.Header) mad.Header {
			reply := append(mad.Header(nil), req...)
			method := req.Method()
			if method == mad.MethodSet {
				method = mad.MethodGet
			}
			if method != mad.MethodSend {
				method |= mad.MethodResponse
			}
			vendormad.ReplyHeader(reply, method)
			data := reply[mad.Vendor2DataOffset:]
			clear(data)
			copy(data, host)
			return reply
		})
	}

	dest, target, err := cmdutil.VendorTarget(ctx, env, client, &opts.Common, args[0])
	if err != nil {
		return nil, err
	}
	sigs := make(chan os.Signal, 1)
	defer umad.HandleSignals(sigs)() // ends with our statistics, not exit 130

	req, err := vendormad.Request(client, dest, mad.ClassVendorOFA, mad.AttrOFAPing, oui)
	if err != nil {
		return nil, err
	}
	res := &IbpingResult{Target: target, Pongs: []ibpingPong{}}
	var total, minRTT, maxRTT time.Duration
	start := time.Now()
loop:
	for seq := uint64(1); seq <= count; seq++ {
		res.Transmitted++
		sent := time.Now()
		reply, err := client.Do(ctx, req)
		rtt := time.Since(sent)
		if err != nil {
			if ctx.Err() != nil {
				res.Transmitted--
				break
			}
			fmt.Fprintf(env.IO.Err, "ibping: %v\n", err)
			res.Pongs = append(res.Pongs, ibpingPong{Seq: int(seq), Error: err.Error()})
		} else {
			host := vendormad.Describe(reply)
			if res.Host == "" {
				res.Host = host
			}
			res.Received++
			total += rtt
			if minRTT == 0 || rtt < minRTT {
				minRTT = rtt
			}
			maxRTT = max(maxRTT, rtt)
			res.Pongs = append(res.Pongs, ibpingPong{Seq: int(seq), Host: host, RTTMS: cmdutil.Millis(rtt.Microseconds())})
			if !opts.flood && !opts.JSON {
				fmt.Fprintf(env.IO.Out, "Pong from %s (%s): time %s ms\n", host, res.Target.Text, msec(rtt.Microseconds()))
			}
		}
		if opts.flood {
			select {
			case <-sigs:
				break loop
			case <-ctx.Done():
				break loop
			default:
			}
			continue
		}
		select { // the C tool sleeps after every ping, the last one too
		case <-sigs:
			break loop
		case <-ctx.Done():
			break loop
		case <-time.After(time.Second):
		}
	}
	res.TimeMS = time.Since(start).Milliseconds()
	if lost := res.Transmitted - res.Received; lost != 0 {
		res.LossPercent = lost * 100 / res.Transmitted
	}
	res.RTTMinUS, res.RTTMaxUS = minRTT.Microseconds(), maxRTT.Microseconds()
	if res.Received > 0 {
		res.RTTAvgUS = total.Microseconds() / int64(res.Received)
	}
	res.RTTMinMS, res.RTTAvgMS, res.RTTMaxMS = cmdutil.Millis(res.RTTMinUS), cmdutil.Millis(res.RTTAvgUS), cmdutil.Millis(res.RTTMaxUS)
	return res, nil
}

// msec prints microseconds as the C tools print milliseconds: "0.028".
func msec(us int64) string { return fmt.Sprintf("%d.%03d", us/1000, us%1000) }

// The rest of this file is shared with ibsysstat: the OFA vendor classes'
// requests, replies and servers.
