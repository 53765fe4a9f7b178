package ibsysstat

// ibsysstat: system information of a host through the OFA sysstat vendor
// class (0x33, OUI 0x001405), or the server that answers it (-S), as
// infiniband-diags 44's ibsysstat.
//
// Client: "ibsysstat <dest> [ping|host|cpu|cpi]" sends one Get (one
// attempt, as the C tool, with -t as its timeout) and prints "sysstat ping
// succeeded" (ping, the default), the responder's "host.domain" (host) or
// its "cpu N: model M MHZ F" lines (cpu). cpi (ClassPortInfo, attribute
// 1) is python-rdma's addition, not in the C tool: its fields in
// libibmad's dotted form. A lost request fails as "ibsystat to Lid 3:
// Connection timed out" (sic, the C tool's words).
//
// Server (-S): answers host with "hostname.domainname" (as ibping -S),
// cpu with /proc/cpuinfo's model name and cpu MHz per processor (the C
// tool's format, its leading spaces included), ping with an empty reply
// and cpi with a ClassPortInfo; other attributes get an empty reply, as
// from the C server. Only requests with -o's OUI are answered. Under
// ibsim the server must connect as SM on a node without one
// (SIM_SET_ISSM=1 SIM_HOST=<node>), as for ibping -S.
//
// A reply is one MAD: the cpu text is cut at 216 bytes (the C server sends
// longer ones with RMPP, which the simulator truncates to the same 216
// bytes and which ibtool's kernel agents for vendor classes do not
// register for yet).
//
// Deliberate differences: cpi; -o must be a number; an unknown operation
// is a usage error with a message (C: the usage text).
//
// JSON (--json, client): {"target" (docs/json.md's target; text
// portid2str), "operation", and "ok"
// (ping), "host" (host), "cpus" (cpu: the lines), or "class_port_info"
// (cpi: mad's JSON)}.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/internal/cli/cmdutil"
	"github.com/ibtool/ibtool/internal/jsonv"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/rpc"
	"github.com/ibtool/ibtool/internal/vendormad"
)

type ibsysstatOptions struct {
	cmdutil.Common
	oui    string
	server bool
}

// attrClassPortInfo is the attribute of the cpi operation.
const attrClassPortInfo = 0x0001

// sysstatAttr is an operation's attribute (ibsysstat.c's match_attr);
// false for no operation.
func sysstatAttr(op string) (uint16, bool) {
	switch op {
	case "ping":
		return mad.AttrSysStatPing, true
	case "host":
		return mad.AttrSysStatHostInfo, true
	case "cpu":
		return mad.AttrSysStatCPUInfo, true
	case "cpi":
		return attrClassPortInfo, true
	}
	return 0, false
}

// NewCmd builds the ibsysstat command.
func NewCmd(env *cmdutil.Env, _ string) *cobra.Command {
	opts := &ibsysstatOptions{}
	cmd := cmdutil.ToolCommand("ibsysstat [options] <dest lid|guid> [<op>]", "Query a host's system information (ping, host, cpu, cpi), or serve it (-S)")
	cmd.Long = "ibsysstat asks the ibsysstat server on a host (ibsysstat -S) for its name or CPUs.\n" +
		"Operations: ping (default), host, cpu, cpi (ClassPortInfo)."
	cmd.Example = `  ibsysstat 12 host     # the name of the host at LID 12
  ibsysstat -S          # answer on the local port`
	fs := cmd.Flags()
	fs.StringVarP(&opts.oui, "oui", "o", "", "use specified OUI number")
	fs.BoolVarP(&opts.server, "Server", "S", false, "start in server mode")
	cmdutil.SetupCommon(env, cmd, &opts.Common, "DKy")
	cmd.RunE = func(c *cobra.Command, args []string) error {
		if len(args) == 0 && !opts.server {
			return cmdutil.UsageErrorf("expected <dest lid|guid> [<op>] (or -S)")
		}
		res, err := runIbsysstat(c.Context(), env, opts, args)
		return cmdutil.Finish(env, &opts.Common, "ibsysstat", res, err)
	}
	return cmd
}

// IbsysstatResult is ibsysstat's result.
type IbsysstatResult struct {
	Target        jsonv.Target    `json:"target"`
	Operation     string          `json:"operation"`
	OK            bool            `json:"ok,omitempty"`
	Host          string          `json:"host,omitempty"`
	CPUs          []string        `json:"cpus,omitempty"`
	ClassPortInfo json.RawMessage `json:"class_port_info,omitempty"`

	cpuText string             // the cpu reply as the C tool prints it
	cpi     *mad.ClassPortInfo // the cpi reply
}

func (r *IbsysstatResult) WriteText(w io.Writer) error {
	var s string
	switch r.Operation {
	case "ping":
		s = "sysstat ping succeeded\n"
	case "host":
		s = r.Host + "\n"
	case "cpu":
		s = r.cpuText + "\n"
	case "cpi":
		s = fmt.Sprintf("# ClassPortInfo: %s\n%s", r.Target.Text, mad.Dotted(r.cpi, nil))
	}
	_, err := io.WriteString(w, s)
	return err
}

func runIbsysstat(ctx context.Context, env *cmdutil.Env, opts *ibsysstatOptions, args []string) (cmdutil.Result, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	op := "ping"
	if len(args) > 1 {
		op = args[1]
		if _, ok := sysstatAttr(op); !ok {
			return nil, cmdutil.UsageErrorf("unknown operation %q: ping, host, cpu or cpi", op)
		}
	}
	oui, err := cmdutil.VendorOUI(opts.oui)
	if err != nil {
		return nil, err
	}
	if len(args) > 0 {
		cmdutil.ScopeLocalPort(&opts.Common, args[0]) // "GID%rxe1/1" picks the local port
	}
	client, err := cmdutil.IBOpenClient(env, &opts.Common, cmdutil.EngineConfig{Timeout: rpc.DefaultTimeout})
	if err != nil {
		return nil, err
	}
	defer client.Engine().Close()
	if opts.server {
		cpus := sysstatCPUText()
		host := vendormad.HostAndDomain(1 << 16)
		return nil, cmdutil.VendorServe(ctx, client.Engine(), "ibsysstat", mad.ClassVendorOFASysStat, oui, func(req mad.Header) mad.Header {
			reply := append(mad.Header(nil), req...)
			vendormad.ReplyHeader(reply, mad.MethodGetResp)
			data := reply[mad.Vendor2DataOffset:]
			text := ""
			switch req.AttrID() {
			case mad.AttrSysStatHostInfo:
				text = host
			case mad.AttrSysStatCPUInfo:
				text = cpus
			case attrClassPortInfo:
				cpi := mad.ClassPortInfo{BaseVersion: 1, ClassVersion: 1}
				clear(data)
				_ = cpi.Marshal(data)
			}
			// RMPP header as libibmad's mad_build_pkt writes it: version
			// 1, RRespTime 0x1f, the Active flag for a multi-MAD reply.
			reply[24], reply[25], reply[26], reply[27] = 1, 0, 0x1f<<3, 0
			clear(reply[28:36])
			if text != "" {
				n := copy(data, text)
				clear(data[n:])
				if len(text)+1 > len(data) {
					reply[26] |= 1 // RMPP Active: the C server's reply would be longer
				}
			}
			return reply
		})
	}

	dest, target, err := cmdutil.VendorTarget(ctx, env, client, &opts.Common, args[0])
	if err != nil {
		return nil, err
	}
	res := &IbsysstatResult{Target: target, Operation: op}
	attr, _ := sysstatAttr(op)
	req, err := vendormad.Request(client, dest, mad.ClassVendorOFASysStat, attr, oui)
	if err != nil {
		return nil, err
	}
	once := 0
	req.Retries = &once
	reply, err := client.Do(ctx, req)
	if err != nil {
		return nil, &cmdutil.Failure{CMsg: fmt.Sprintf("ibsystat to %s: Connection timed out", res.Target.Text), Err: err}
	}
	switch op {
	case "ping":
		res.OK = true
	case "host":
		res.Host = vendormad.Describe(reply)
	case "cpu":
		res.cpuText = vendormad.Describe(reply)
		res.CPUs = strings.Split(strings.TrimSuffix(res.cpuText, "\n"), "\n")
	case "cpi":
		res.cpi = &mad.ClassPortInfo{}
		if err := res.cpi.Unmarshal(reply[mad.Vendor2DataOffset:]); err != nil {
			return nil, &cmdutil.Failure{CMsg: fmt.Sprintf("ibsystat to %s: %v", res.Target.Text, err)}
		}
		res.ClassPortInfo, _ = json.Marshal(res.cpi)
	}
	return res, nil
}

// sysstatCPUText is the C server's cpu reply: "cpu N: model M MHZ F\n"
// per processor of /proc/cpuinfo (at most 256), M and F as they follow the
// colon (a leading space included), "(null)" where a processor has none.
func sysstatCPUText() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		fmt.Fprintf(os.Stderr, "ibwarn: [%d] build_cpuinfo: couldn't open /proc/cpuinfo\n", os.Getpid())
		return ""
	}
	defer f.Close()
	type cpu struct{ model, mhz string }
	var cpus []cpu
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "processor\t") {
			if len(cpus) == 256 {
				break
			}
			cpus = append(cpus, cpu{"(null)", "(null)"})
			continue
		}
		i := strings.IndexByte(line, ':')
		if len(cpus) == 0 || i < 0 {
			continue
		}
		switch {
		case strings.HasPrefix(line, "model name\t"):
			cpus[len(cpus)-1].model = line[i+1:]
		case strings.HasPrefix(line, "cpu MHz\t"):
			cpus[len(cpus)-1].mhz = line[i+1:]
		}
	}
	var b strings.Builder
	for i, c := range cpus {
		fmt.Fprintf(&b, "cpu %d: model %s MHZ %s\n", i, c.model, c.mhz)
	}
	return b.String()
}
