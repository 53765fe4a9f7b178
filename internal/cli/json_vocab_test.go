package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/ibtool/ibtool/internal/cli/cmd/ibidsverify"
	"github.com/ibtool/ibtool/internal/cli/cmd/ibping"
	"github.com/ibtool/ibtool/internal/cli/cmd/ibportstate"
	"github.com/ibtool/ibtool/internal/cli/cmd/ibsysstat"
	"github.com/ibtool/ibtool/internal/cli/cmd/setportstate"
	"github.com/ibtool/ibtool/internal/cli/cmd/subnetdiff"
	verbscmd "github.com/ibtool/ibtool/internal/cli/cmd/verbs"
	"github.com/ibtool/ibtool/internal/cli/cmdutil"
	"github.com/ibtool/ibtool/internal/jsonv"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/query"
	"github.com/ibtool/ibtool/internal/verbs"
	"github.com/ibtool/ibtool/internal/verbs/rdmabw"
)

// vocabRun produces one --json document of a command.
type vocabRun struct {
	args string                    // the command's arguments, --json added
	run  func(t *testing.T) []byte // instead of args, for what needs more than a fabric
}

// TestJSONVocabulary runs every command with --json on a simulated fabric
// and checks each document against the vocabulary (docs/json.md, jsonv):
// not only valid JSON, the rules. A new command must add its runs here.
func TestJSONVocabulary(t *testing.T) {
	f := sharedFabric(t, "tiny.net")
	srv := serverFabric(t)
	// Commands without --json.
	// The exporter writes Prometheus' text format (its --json is a usage error).
	noJSON := map[string]bool{"install-links": true, "help": true, "completion": true, "exporter": true}
	runs := map[string][]vocabRun{
		"smpdump":  {{args: "-D 0,8 0x11"}, {args: "2 0x15 1"}},
		"smpquery": {{args: "nodeinfo 2"}, {args: "nd 2"}, {args: "portinfo 2 1"}, {args: "si 1"}, {args: "pkeys 2 1"}, {args: "sl2vl 2 1"}, {args: "vlarb 2 1"}, {args: "gi 1"}, {args: "-D ni 0,1"}, {args: "mepi 2 1"}, {args: "-G ni 0x100001"}},
		"perfquery": {{args: "2 1"}, {args: "-x 2 1"}, {args: "-a 1"}, {args: "-r 2 1"}, {args: "-G 0x100001 1"},
			{args: "-D 2 1"}, {args: "-E 2 1"}, {args: "-l 2"}},
		"ibroute":           {{args: "1"}, {args: "-M 1"}, {args: "-a 7"}},
		"dump_fts":          {{args: ""}, {args: "-M"}},
		"dump_lfts":         {{args: ""}},
		"dump_mfts":         {{args: ""}},
		"ibtracert":         {{args: "2 Hca3"}, {args: "4"}},
		"ibfindnodesusing":  {{args: "0x200000 8"}},
		"check_lft_balance": {{args: ""}, {args: "-v"}},
		"sminfo":            {{args: ""}, {args: "1"}},
		"ibaddr":            {{args: ""}, {args: "-D 0,1"}, {args: "-G " + hca2GUID}},
		"ibportstate": {{args: "-D 0 1"}, {args: "2 1"}, {args: "2 1 query"},
			// The changes of the operations that set something (not run
			// here: they would change the shared fabric).
			{run: func(t *testing.T) []byte {
				values := map[string]uint64{}
				for _, o := range ibportstate.PortOps {
					if o.HasValue {
						values[o.Name] = 1
					}
				}
				return marshalVocab(t, map[string]any{"changes": ibportstate.PortChangesJSON(values)})
			}}},
		"query": {{args: "SubnGet PortInfo 2 -a 1"}, {args: "SubnGet NodeInfo 2 -f NodeGUID -f NodeType"},
			{args: "PerformanceGet PortCounters 2 -f PortSelect=1"}, {args: "SubnAdmGetTable NodeRecord"}, {args: "SubnAdmGet PathRecord -f DLID=2 -f SLID=1"}},
		"set_nodedesc": {{run: kernelRun("set_nodedesc")}, {run: func(t *testing.T) []byte {
			r := runKernel(t, writableSysfs(t), "ibtool", "set_nodedesc", "--json", "-C", "mlx5_0", "renamed")
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			return vocabDoc(t, r.stdout)
		}}},
		// The changes of set_port_state and init_all_ports are not run
		// here (they would change the shared fabric): a dry run, and the
		// document of a change.
		"set_port_state": {{args: "1@4 7@1"}, {run: portStateVocab("disable")}},
		"init_all_ports": {{run: portStateVocab("init")}},
		"set_guid": {{run: func(t *testing.T) []byte {
			_, run := setGUIDOnFake()
			r := run("--json", "-D", "0", "3", "0x0002c9030000b003,0x0002c9030000b004")
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			return vocabDoc(t, r.stdout)
		}}},
		"ibnetdiscover": {{args: ""}, {args: "-H"}, {args: "-S"}},
		"diagnose": {{args: "--interval 0.5"}, {run: func(t *testing.T) []byte {
			// Findings with rates, states and places: checks.net below
			// what is expected of it, against its own cache.
			cf := checksFabric(t)
			cache := filepath.Join(t.TempDir(), "x.cache")
			if r := runSim(cf, "", "ibnetdiscover", "--cache", cache); r.Code != 0 {
				t.Fatal(r)
			}
			return vocabDoc(t, runSim(cf, "", "diagnose", "--json", "--interval", "0.5", "--expect", cache, "--expect-width", "12X", "--expect-speed", "EDR").Stdout)
		}}},
		"iblinkinfo":    {{args: ""}, {args: "-p"}, {args: "-d"}},
		"ibqueryerrors": {{args: ""}, {args: "--details --data -r"}, {args: "--counters"}, {args: "-k -K --details --dry-run"}},
		"ibhosts":       {{args: ""}},
		"topology":      {{args: ""}, {args: "--format dot"}},
		"ibswitches":    {{args: ""}},
		"ibrouters":     {{args: ""}},
		"ibnodes":       {{args: ""}},
		"ibprintca":     {{args: "-l"}, {args: "0x100000"}},
		"ibprintswitch": {{args: "0x200001"}},
		"ibprintrt":     {{args: "-l"}},
		"saquery": {{args: "NR"}, {args: "PR"}, {args: "PIR"}, {args: "LR"}, {args: "SWI"}, {args: "SR"}, {args: "GIR"}, {args: "MCMR"},
			{args: "CPI"}, {args: "SL2VL"}, {args: "VLAR"}, {args: "LFTR"}, {args: "MFTR"}, {args: "SMIR"}, {args: "-s"}, {args: "-g"}, {args: "-x"}, {args: "-m"}},
		"ibstat": {
			{run: kernelRun("ibstat")}, {run: kernelRun("ibstat", "-l")}, {run: kernelRun("ibstat", "-p")},
		},
		"ibstatus":   {{run: kernelRun("ibstatus")}},
		"decode_mad": {{run: decodeVocabRun("sa_pathrecord.req")}, {run: decodeVocabRun("dr_nodeinfo.mad")}, {run: decodeVocabRun("perf_counters.mad")}, {run: decodeVocabRun("dr_nodeinfo.send")}},
		"ibping": {{run: func(t *testing.T) []byte {
			stop := startGoServer(t, srv, "Hca2", ibping.NewCmd)
			defer stop()
			return vocabDoc(t, runSim(srv, "Hca1", "ibping", "--json", "-c", "2", lidOf(t, srv, hca2GUID)).Stdout)
		}}},
		"ibsysstat": {{run: func(t *testing.T) []byte {
			stop := startGoServer(t, srv, "Hca2", ibsysstat.NewCmd)
			defer stop()
			lid := lidOf(t, srv, hca2GUID)
			var docs []string
			for _, op := range []string{"ping", "host", "cpu", "cpi"} {
				r := runSim(srv, "Hca1", "ibsysstat", "--json", lid, op)
				if r.Code != 0 {
					t.Fatalf("ibsysstat %s: exit %d: %s", op, r.Code, r.Stderr)
				}
				docs = append(docs, r.Stdout)
			}
			return vocabDoc(t, "["+strings.Join(docs, ",")+"]")
		}}},
		"ibccquery": {ccvendVocab("ibccquery", "CP", "2"), ccvendVocab("ibccquery", "CI", "2"), ccvendVocab("ibccquery", "CK", "2"),
			ccvendVocab("ibccquery", "CL", "2"), ccvendVocab("ibccquery", "CL", "3"), ccvendVocab("ibccquery", "SS", "2"),
			ccvendVocab("ibccquery", "SP", "2"), ccvendVocab("ibccquery", "SP", "2", "1"), ccvendVocab("ibccquery", "CS", "3"),
			ccvendVocab("ibccquery", "CT", "3"), ccvendVocab("ibccquery", "TI", "2")},
		"ibccconfig": {ccvendVocab("ibccconfig", "CK", "2", "1", "0", "0", "0"), ccvendVocab("ibccconfig", "SS", "2", "1", "0xff", "0", "1", "2", "3", "1:2", "4"),
			ccvendVocab("ibccconfig", "SP", "2", "1", "1", "0", "2", "3", "4"), ccvendVocab("ibccconfig", "CS", "3", "0", "1", "2", "3", "4", "5"),
			ccvendVocab("ibccconfig", "CT", "3", "1", "0", "0:1", "1:2")},
		"vendstat": {ccvendVocab("vendstat", "-N", "2"), ccvendVocab("vendstat", "--cpi", "2"), ccvendVocab("vendstat", "-N", "-w", "5"), ccvendVocab("vendstat", "-i", "2", "1"),
			ccvendVocab("vendstat", "-c", "1,2", "2", "1"), ccvendVocab("vendstat", "-R", "1234", "-W", "1234,1", "2")},
		"subnet_diff": {{run: func(t *testing.T) []byte {
			cache := filepath.Join(t.TempDir(), "x.cache")
			if r := runSim(f, "", "ibnetdiscover", "--cache", cache); r.Code != 0 {
				t.Fatal(r)
			}
			return vocabDoc(t, runSim(f, "", "subnet_diff", "--json", cache).Stdout)
		}}},
		"ibcacheedit": {{run: func(t *testing.T) []byte {
			dir := t.TempDir()
			x := simCache(t, f, dir)
			return vocabDoc(t, runIbtool("ibtool", "ibcacheedit", "--json", "--switchguid", "0x200000:0xabcdef",
				"--portguid", "0x100000:0x100001:0x100099", x, filepath.Join(dir, "new.cache")).Stdout)
		}}},
		"ibchecknode": {{args: "2"}},
		"ibcheckport": {{args: "2 1"}, {run: func(t *testing.T) []byte {
			// A port without cable: the check fails (exit 100), the
			// document says why.
			return vocabDoc(t, runSim(f, "", "ibcheckport", "--json", "1", "3").Stdout)
		}}},
		"ibcheckportstate": {{args: "2 1"}},
		"ibcheckportwidth": {{args: "2 1"}},
		"ibcheckerrs":      {{args: "2 1"}, {args: "1"}, {args: "-s"}},
		"ibdatacounts":     {{args: "2 1"}},
		"ibcheckstate":     {{args: ""}},
		"ibcheckwidth":     {{args: ""}},
		"ibchecknet": {{args: ""}, {run: func(t *testing.T) []byte {
			// A fabric with warnings, counters beyond thresholds.
			return vocabDoc(t, runSim(checksFabric(t), "", "ibchecknet", "--json").Stdout)
		}}},
		"ibcheckerrors":   {{args: ""}},
		"ibdatacounters":  {{args: ""}},
		"ibclearcounters": {{args: "--dry-run"}},
		"ibclearerrors":   {{args: "--dry-run"}},
		"ibswportwatch":   {{args: "-n 2 -p 0.05 2 1"}, {args: "-x -n 2 -p 0.05 2 1"}},
		"ibidsverify": {{args: "-R"}, {run: func(t *testing.T) []byte {
			ca := fmt.Sprintf("ibtoolvocab%d", os.Getpid())
			file := filepath.Join(ibidsverify.IdsCacheDir, "ibnetdiscover-"+ca+"-1.topology")
			text, err := os.ReadFile("testdata/ibidsverify/dup.topology")
			if err == nil {
				err = os.WriteFile(file, text, 0o644)
			}
			if err != nil {
				t.Fatal(err)
			}
			defer os.Remove(file)
			return vocabDoc(t, runSim(f, "", "ibidsverify", "--json", "-C", ca, "-P", "1").Stdout)
		}}},
		// The verbs commands have no simulator: their JSON from what the
		// devices would report.
		"ibv_devices": {{run: func(t *testing.T) []byte {
			return marshalVocab(t, verbscmd.VerbsDevicesJSON([]verbs.Device{{Name: "mlx5_0", GUID: 0x2c90300a1b2c3, NodeType: verbs.NodeCA, Transport: verbs.TransportIB}}))
		}}},
		"ibv_devinfo": {{run: func(t *testing.T) []byte {
			return marshalVocab(t, verbscmd.DevinfoJSON([]*verbscmd.DevinfoDevice{vocabDevinfo()}))
		}}},
		"rdma_bw": {{run: func(t *testing.T) []byte {
			gid := mad.GID{0xfe, 0x80, 15: 1}
			r := &rdmabw.Result{Role: "client", Device: "rxe1", Port: 1, LinkLayer: "Ethernet", GIDIndex: 1, Size: 65536,
				Iters: 1000, TxDepth: 128, NumSGE: 1, MTU: 1024, Verified: true, LocalGID: gid.String(), RemoteGID: gid.String(),
				Local: rdmabw.Endpoint{QPN: 0x11, PSN: 0xabcdef, RKey: 0x4b5, Addr: 0x7f786998a000}}
			r.Bytes, r.Seconds, r.BWAverage, r.MsgRate = 65536000, 1.625, 38.46, 0.000615
			return marshalVocab(t, r)
		}}},
	}

	var names []string
	for _, c := range newRoot(&cmdutil.Env{}, "").Commands() {
		if !noJSON[c.Name()] {
			names = append(names, c.Name())
		}
	}
	sort.Strings(names)
	for _, name := range names {
		if len(runs[name]) == 0 {
			t.Errorf("%s: no --json run in TestJSONVocabulary: add one", name)
		}
	}
	for _, name := range names {
		for _, vr := range runs[name] {
			t.Run(name+" "+vr.args, func(t *testing.T) {
				var doc []byte
				if vr.run != nil {
					doc = vr.run(t)
				} else {
					r := runSim(f, "", append([]string{name, "--json"}, strings.Fields(vr.args)...)...)
					if r.Code != 0 && r.Code != subnetdiff.ExitDifferent {
						t.Fatalf("exit %d: %s", r.Code, r.Stderr)
					}
					doc = vocabDoc(t, r.Stdout)
				}
				for _, v := range jsonv.Check(doc) {
					t.Error(v)
				}
			})
		}
	}
}

// vocabDoc is a command's stdout as a document; an empty one fails.
func vocabDoc(t *testing.T, stdout string) []byte {
	t.Helper()
	if strings.TrimSpace(stdout) == "" {
		t.Fatal("no JSON on stdout")
	}
	return []byte(stdout)
}

func marshalVocab(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// kernelRun runs a local-port command on the recorded sysfs of ibstat's
// tests.
func kernelRun(args ...string) func(t *testing.T) []byte {
	return func(t *testing.T) []byte {
		r := runKernel(t, fakeSysfs(t), append(args[:1:1], append([]string{"--json"}, args[1:]...)...)...)
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		return vocabDoc(t, r.stdout)
	}
}

// decodeVocabRun decodes one of decode_mad's recorded MAD files.
func decodeVocabRun(file string) func(t *testing.T) []byte {
	return func(t *testing.T) []byte {
		in, err := os.ReadFile(filepath.Join(decodeDir, file))
		if err != nil {
			t.Fatal(err)
		}
		args := []string{"--json"}
		if strings.HasSuffix(file, ".send") {
			args = append(args, "--umad")
		}
		return vocabDoc(t, decodeRun(string(in), args...).stdout)
	}
}

// vocabDevinfo is an InfiniBand device with one active port, as
// libibverbs would describe it.
func vocabDevinfo() *verbscmd.DevinfoDevice {
	d := &verbscmd.DevinfoDevice{Dev: verbs.Device{Name: "mlx5_0", GUID: 0x2c90300a1b2c3, NodeType: verbs.NodeCA, Transport: verbs.TransportIB}}
	d.Attr.NodeGUID, d.Attr.SysImageGUID, d.Attr.PhysPortCnt = 0x2c90300a1b2c3, 0x2c90300a1b2c3, 1
	p := verbscmd.DevinfoPort{Num: 1}
	p.Attr.State, p.Attr.LID, p.Attr.SMLID, p.Attr.LinkLayer = verbs.PortActive, 4, 1, verbs.LinkLayerInfiniBand
	p.Attr.ActiveWidth, p.Attr.ActiveSpeed = 2, 32
	p.GIDs = []verbscmd.DevinfoGID{{Index: 0, GID: verbs.GID{0xfe, 0x80, 8: 0, 9: 2, 10: 0xc9, 11: 3, 15: 1}}}
	d.Ports = []verbscmd.DevinfoPort{p}
	return d
}

// portStateVocab is the document of a port state change, as the Set's
// reply would make it.
func portStateVocab(op string) func(t *testing.T) []byte {
	return func(t *testing.T) []byte {
		before := mad.PortInfo{PortState: mad.PortStateActive, PortPhysicalState: mad.PhysPortStateLinkUp}
		after := mad.PortInfo{PortState: mad.PortStateInit, PortPhysicalState: mad.PhysPortStateDisabled}
		d := query.DR([]byte{0, 1})
		e := setportstate.PortStateEntry{Target: cmdutil.DestTarget(d, d.String()), NodeGUID: 0x200000, PortGUID: 0x200000, Port: 4,
			PortState: before.PortState, PortStateText: setportstate.StateText(&before, "PortState"),
			PhysState: before.PortPhysicalState, PhysStateText: setportstate.StateText(&before, "PortPhysicalState")}
		e.SetAfter(&after)
		return marshalVocab(t, &setportstate.SetPortStateResult{Operation: op, Ports: []setportstate.PortStateEntry{e}})
	}
}
