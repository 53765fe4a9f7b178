package verbs

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/internal/cli/cmdutil"
	"github.com/ibtool/ibtool/internal/umad"
	"github.com/ibtool/ibtool/internal/verbs"
	"github.com/ibtool/ibtool/internal/verbs/rdmabw"
)

type rdmaBwOptions struct {
	cmdutil.Common // only --json
	cfg            rdmabw.Config
}

// NewRdmaBwCmd builds the rdma_bw command.
func NewRdmaBwCmd(env *cmdutil.Env, _ string) *cobra.Command {
	opts := &rdmaBwOptions{}
	cmd := cmdutil.ToolCommand("rdma_bw [options] [SERVER]", "RDMA WRITE bandwidth test over an RC queue pair")
	cmd.Long = `rdma_bw measures RDMA WRITE bandwidth over one reliable-connected queue pair.
Without SERVER it waits for a client on the TCP port; with SERVER it connects
there, swaps QP, memory region and GID details over TCP, writes its buffer
-n times into the server's and reports the bandwidth. The server checks that
its buffer holds the client's data. The client's -s, -n and -e count.

MB/sec is 2^20 bytes per second, as in perftest. On RoCE ports a GRH is
always used, with GID index 0 unless -x says otherwise.
It needs libibverbs at run time (` + verbs.DefaultLibrary + `, or $` + verbs.LibraryEnv + `).`
	cmd.Example = `  ibtool rdma_bw -d rxe0 -x 1                 # server
  ibtool rdma_bw -d rxe1 -x 1 -s 65536 10.99.0.1  # client`
	fs := cmd.Flags()
	c := &opts.cfg
	fs.IntVarP(&c.TCPPort, "port", "p", rdmabw.DefaultTCPPort, "listen on/connect to TCP `port`")
	fs.StringVarP(&c.Device, "ib-dev", "d", "", "use IB device `dev` (default first device found)")
	fs.IntVarP(&c.Port, "ib-port", "i", 1, "use `port` of the IB device")
	fs.IntVarP(&c.Size, "size", "s", rdmabw.DefaultSize, "write messages of `bytes` bytes (client only)")
	fs.IntVarP(&c.TxDepth, "tx-depth", "t", rdmabw.DefaultTxDepth, "writes in flight")
	fs.IntVarP(&c.Iters, "iters", "n", rdmabw.DefaultIters, "number of writes (client only)")
	fs.IntVarP(&c.NumSGE, "num-sge", "e", rdmabw.DefaultNumSGE, "scatter/gather elements per write")
	fs.IntVarP(&c.GIDIndex, "gid-index", "x", -1, "source GID `index` (RoCE: default 0)")
	fs.BoolVar(&opts.JSON, "json", false, "print the result as JSON")
	fs.SortFlags = false
	cmd.RunE = func(cc *cobra.Command, args []string) error {
		if len(args) > 1 {
			return cmdutil.UsageErrorf("expected at most one argument, the server address")
		}
		if len(args) == 1 {
			c.Server = args[0]
		}
		if err := checkRdmaBwOptions(c); err != nil {
			return err
		}
		return runVerbs(env, func() error { return runRdmaBw(env, opts) })
	}
	return cmd
}

func checkRdmaBwOptions(c *rdmabw.Config) error {
	switch {
	case c.TCPPort < 1 || c.TCPPort > 65535:
		return cmdutil.UsageErrorf("invalid TCP port %d", c.TCPPort)
	case c.Port < 1 || c.Port > 255:
		return cmdutil.UsageErrorf("invalid IB port %d", c.Port)
	case c.Size < 1:
		return cmdutil.UsageErrorf("invalid size %d", c.Size)
	case c.TxDepth < 1:
		return cmdutil.UsageErrorf("invalid tx depth %d", c.TxDepth)
	case c.Iters < 1:
		return cmdutil.UsageErrorf("invalid number of iterations %d", c.Iters)
	case c.NumSGE < 1 || c.NumSGE > c.Size:
		return cmdutil.UsageErrorf("invalid number of SGEs %d", c.NumSGE)
	case c.GIDIndex < -1 || c.GIDIndex > 255:
		return cmdutil.UsageErrorf("invalid GID index %d", c.GIDIndex)
	}
	return nil
}

func runRdmaBw(env *cmdutil.Env, opts *rdmaBwOptions) error {
	// SIGINT and SIGTERM end the test (it reports what it measured)
	// instead of the process; exitclean decides which handler gets them.
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	sigs := make(chan os.Signal, 1)
	defer umad.HandleSignals(sigs)()
	go func() {
		select {
		case <-sigs:
			stop()
		case <-ctx.Done():
		}
	}()
	cfg := opts.cfg
	if !opts.JSON {
		cfg.Logf = func(format string, args ...any) { fmt.Fprintf(env.IO.Out, format+"\n", args...) }
	}
	res, err := rdmabw.Run(ctx, cfg)
	if err != nil {
		return err
	}
	return cmdutil.Finish(env, &opts.Common, "rdma_bw", (*rdmaBwReport)(res), nil)
}

// rdmaBwReport is one side's result: rdmabw.Result's JSON, a
// perftest-style report as text.
type rdmaBwReport rdmabw.Result

func (r *rdmaBwReport) WriteText(w io.Writer) error {
	return cmdutil.WriteString(w, FormatRdmaBwReport((*rdmabw.Result)(r)))
}

const rdmaBwLine = "---------------------------------------------------------------------------------------\n"

// FormatRdmaBwReport is a perftest-style report of one side's result.
func FormatRdmaBwReport(r *rdmabw.Result) string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	b.WriteString(rdmaBwLine)
	p("                    RDMA_Write BW Test (ibtool rdma_bw, %s)\n", r.Role)
	p(" Device         : %s\n", r.Device)
	p(" Port           : %d\n", r.Port)
	p(" Link type      : %s\n", r.LinkLayer)
	if r.GIDIndex >= 0 {
		p(" GID index      : %d\n", r.GIDIndex)
	}
	p(" Connection     : RC\n")
	p(" TX depth       : %d\n", r.TxDepth)
	p(" SGEs per write : %d\n", r.NumSGE)
	p(" Path MTU       : %d[B]\n", r.MTU)
	b.WriteString(rdmaBwLine)
	addr := func(side string, e rdmabw.Endpoint, gid string) {
		p(" %s address: LID %#04x QPN %#06x PSN %#06x RKey %#08x VAddr %#016x\n", side, e.LID, e.QPN, e.PSN, e.RKey, e.Addr)
		if gid != "" {
			p(" GID: %s\n", gid)
		}
	}
	addr("local", r.Local, r.LocalGID)
	addr("remote", r.Remote, r.RemoteGID)
	b.WriteString(rdmaBwLine)
	verified := "no"
	if r.Verified {
		verified = "yes"
	}
	p(" %-10s %-14s %-20s %-15s %-14s %-9s %s\n", "#bytes", "#iterations", "BW average[MB/sec]", "MsgRate[Mpps]", "total bytes", "seconds", "data verified")
	p(" %-10d %-14d %-20.2f %-15.6f %-14d %-9.3f %s\n", r.Size, r.Bytes/uint64(max(r.Size, 1)), r.BWAverage, r.MsgRate, r.Bytes, r.Seconds, verified)
	b.WriteString(rdmaBwLine)
	return b.String()
}
