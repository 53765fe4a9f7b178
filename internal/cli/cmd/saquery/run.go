package saquery

// One saquery run: the command the options ask for and the selector
// values they give, read as the C tool reads them.

import (
	"bufio"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/ibtool/ibtool/internal/cli/cmdutil"
	"github.com/ibtool/ibtool/internal/ctext"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/nodename"
	"github.com/ibtool/ibtool/internal/rpc"
	"github.com/ibtool/ibtool/internal/sa"
)

// saquery's commands besides the record queries (saquery.c's enum
// saquery_command).
type saCommand int

const (
	saCmdQuery saCommand = iota
	saCmdNodeRecord
	saCmdClassPortInfo
	saCmdIsSM
	saCmdMCGroups
	saCmdMCMembers
)

// How NodeRecords print (saquery.c's node_print_desc).
type saNodePrint int

const (
	saPrintAll saNodePrint = iota
	saPrintLIDOnly
	saPrintUniqueLIDOnly
	saPrintGUIDOnly
	saPrintAllDesc
	saPrintNameOfLID
	saPrintNameOfGUID
)

// saParams are the selector options (saquery.c's query_params), with the
// C tool's "not given" values: -1 for the int ones, 0 for the others.
type saParams struct {
	serviceID             uint64
	sgid, dgid, gid, mgid mad.GID
	slid, dlid, mlid      uint16
	flowLabel             uint32
	hopLimit              int64
	tclass                uint8
	reversible, numbPath  int64
	pkey                  uint16
	qosClass, sl          int64
	mtu, rate, pktLife    uint8
	qkey                  uint32
	scope, joinState      uint8
	proxyJoin             int64
}

// saMember is one MEMBER=VALUE argument.
type saMember struct{ path, value string }

// saQuery is one saquery run.
type saQuery struct {
	env     *cmdutil.Env
	opts    *saqueryOptions
	ctx     context.Context
	eng     *rpc.Engine
	sa      *sa.Client
	names   *nodename.Map
	p       saParams
	members []saMember

	printMode     saNodePrint
	requestedName string
	hasName       bool
	requestedLID  uint16
	requestedGUID uint64

	res *saqueryResult
}

// saMemberRE matches MEMBER=VALUE arguments: a field path, then '='.
var saMemberRE = cmdutil.LazyRegexp{Expr: `^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*|\[[0-9]+\]|\.[0-9]+)*=`}

func runSaquery(env *cmdutil.Env, opts *saqueryOptions, args []string) error {
	q := &saQuery{env: env, opts: opts, ctx: context.Background(),
		res: &saqueryResult{Records: []saRecord{}, MaskFields: []string{}}}
	err := q.run(args)
	return cmdutil.Finish(env, &opts.Common, "saquery", q.res, err)
}

func (q *saQuery) run(args []string) error {
	opts := q.opts
	// MEMBER=VALUE arguments are ibtool's; the rest are the C tool's.
	var pos []string
	for _, a := range args {
		if saMemberRE.Get().MatchString(a) {
			path, value, _ := strings.Cut(a, "=")
			q.members = append(q.members, saMember{path, value})
			continue
		}
		pos = append(pos, a)
	}
	if err := q.parseParams(); err != nil {
		return err
	}

	command := saCmdQuery
	switch opts.last("list", "c", "N", "L", "l", "G", "O", "U", "s", "g", "m") {
	case "list", "N", "L", "l", "G", "O", "U":
		command = saCmdNodeRecord
	case "c":
		command = saCmdClassPortInfo
	case "s":
		command = saCmdIsSM
	case "g":
		command = saCmdMCGroups
	case "m":
		command = saCmdMCMembers
	}
	switch opts.last("list", "L", "l", "G", "O", "U") {
	case "list":
		q.printMode = saPrintAllDesc
	case "L":
		q.printMode = saPrintLIDOnly
	case "l":
		q.printMode = saPrintUniqueLIDOnly
	case "G":
		q.printMode = saPrintGUIDOnly
	case "O":
		q.printMode = saPrintNameOfLID
	case "U":
		q.printMode = saPrintNameOfGUID
	}
	var qt *saqueryType
	switch opts.last("p", "S", "I", "x", "src-to-dst", "sgid-to-dgid") {
	case "p", "src-to-dst", "sgid-to-dgid":
		qt = saqueryTypeByAttr(mad.AttrPathRecord)
	case "S":
		qt = saqueryTypeByAttr(mad.AttrServiceRecord)
	case "I":
		qt = saqueryTypeByAttr(mad.AttrInformInfoRecord)
	case "x":
		qt = saqueryTypeByAttr(mad.AttrLinkRecord)
	}
	if qt == nil && command == saCmdQuery {
		if len(pos) > 0 {
			qt = findSaqueryType(pos[0])
		}
		if qt != nil {
			pos = pos[1:]
		} else {
			qt = saqueryTypeByAttr(mad.AttrNodeRecord)
		}
	}
	if len(pos) > 0 {
		switch q.printMode {
		case saPrintNameOfLID:
			v, _ := ctext.Strtoul(pos[0])
			q.requestedLID = uint16(v)
			q.hasName = true
		case saPrintNameOfGUID:
			q.requestedGUID, _ = ctext.Strtoul(pos[0])
			q.hasName = true
		default:
			q.requestedName, q.hasName = pos[0], true
		}
	}
	switch q.printMode {
	case saPrintLIDOnly, saPrintUniqueLIDOnly, saPrintGUIDOnly:
		if !q.hasName {
			return cmdutil.UsageErrorf("name not specified")
		}
	case saPrintNameOfLID:
		if !q.hasName {
			return cmdutil.UsageErrorf("lid not specified")
		}
		if q.requestedLID == 0 { // a LID cannot be 0 (IBA 4.1.3)
			return cmdutil.UsageErrorf("lid invalid")
		}
	case saPrintNameOfGUID:
		if !q.hasName {
			return cmdutil.UsageErrorf("guid not specified")
		}
	}
	if len(q.members) > 0 && (command == saCmdClassPortInfo || command == saCmdQuery && qt.attr == mad.AttrClassPortInfo) {
		return saFail(SaEINVAL, "ClassPortInfo has no components to match (MEMBER=VALUE)\n")
	}

	if _, err := opts.TimeoutMS(cmdutil.DefaultTimeoutMS); err != nil {
		// IBEXIT during option parsing, as the other tools.
		return &cmdutil.Failure{Fn: "process_opt", CMsg: err.Error()}
	}
	smkey, err := q.smKey()
	if err != nil {
		return err
	}
	eng, err := cmdutil.OpenEngine(q.env, &opts.Common, cmdutil.EngineConfig{Timeout: cmdutil.DefaultTimeoutMS * time.Millisecond, RetryCount: -1})
	if err != nil {
		return err
	}
	defer eng.Close()
	q.eng = eng
	var smLID uint16
	if opts.SMPort != "" {
		v, ok := ctext.Strtoul(opts.SMPort)
		if !ok || v == 0 || v > 0xFFFF {
			return cmdutil.UsageErrorf("--sm_port: invalid LID %q", opts.SMPort)
		}
		smLID = uint16(v)
	}
	if q.sa, err = sa.NewFromPort(eng, smLID, uint16(opts.PKeyIdx)); err != nil {
		return fmt.Errorf("Failed to bind to the SA: %w", err)
	}
	q.sa.SMKey = smkey
	q.names = nodename.Open(q.opts.nodeNameMap, q.env.IO.Err)

	if opts.set("src-to-dst") {
		src, dst, _ := strings.Cut(opts.val("src-to-dst"), ":")
		if src != "" {
			if q.p.slid, err = q.getLID(src); err != nil {
				return err
			}
		}
		if dst != "" {
			if q.p.dlid, err = q.getLID(dst); err != nil {
				return err
			}
		}
	}

	if command == saCmdClassPortInfo || command == saCmdQuery && (qt.attr == mad.AttrClassPortInfo || qt.attr == mad.AttrSwitchInfoRecord) {
		if err := q.queryCPI(); err != nil {
			return err
		}
	}

	switch command {
	case saCmdNodeRecord:
		return q.printNodeRecords()
	case saCmdClassPortInfo:
		return q.classPortInfo(nil)
	case saCmdIsSM:
		return q.printIsSM()
	case saCmdMCGroups:
		return q.printMCGroups()
	case saCmdMCMembers:
		return q.printMCMembers()
	}
	if qt.run != nil {
		return qt.run(q, pos)
	}
	return q.lidQuery(qt, pos)
}

// parseParams turns the selector options into saParams as saquery.c's
// process_opt does: strtoul numbers, inet_pton GIDs (a bad one is a usage
// error), and --src-to-dst/--sgid-to-dgid, which also set numb_path to
// 0x7f when given after -n.
func (q *saQuery) parseParams() error {
	o := q.opts
	p := &q.p
	p.hopLimit, p.reversible, p.numbPath, p.qosClass, p.sl, p.proxyJoin = -1, -1, -1, -1, -1, -1
	num := func(name string) (uint64, bool) {
		if !o.set(name) {
			return 0, false
		}
		v, _ := ctext.Strtoul(o.val(name))
		return v, true
	}
	asInt := func(v uint64) int64 { return int64(int32(uint32(v))) } // unsigned long to C int
	for _, n := range []struct {
		name string
		set  func(uint64)
	}{
		{"slid", func(v uint64) { p.slid = uint16(v) }},
		{"dlid", func(v uint64) { p.dlid = uint16(v) }},
		{"mlid", func(v uint64) { p.mlid = uint16(v) }},
		{"reversible", func(v uint64) { p.reversible = asInt(v) }},
		{"numb_path", func(v uint64) { p.numbPath = asInt(v) }},
		{"qos_class", func(v uint64) { p.qosClass = asInt(v) }},
		{"sl", func(v uint64) { p.sl = asInt(v) }},
		{"mtu", func(v uint64) { p.mtu = uint8(v) }},
		{"rate", func(v uint64) { p.rate = uint8(v) }},
		{"pkt_lifetime", func(v uint64) { p.pktLife = uint8(v) }},
		{"tclass", func(v uint64) { p.tclass = uint8(v) }},
		{"flow_label", func(v uint64) { p.flowLabel = uint32(v) }},
		{"hop_limit", func(v uint64) { p.hopLimit = asInt(v) }},
		{"scope", func(v uint64) { p.scope = uint8(v) }},
		{"join_state", func(v uint64) { p.joinState = uint8(v) }},
		{"proxy_join", func(v uint64) { p.proxyJoin = asInt(v) }},
		{"service_id", func(v uint64) { p.serviceID = v }},
	} {
		if v, ok := num(n.name); ok {
			n.set(v)
		}
	}
	for _, g := range []struct {
		name string
		dst  *mad.GID
	}{{"sgid", &p.sgid}, {"dgid", &p.dgid}, {"gid", &p.gid}, {"mgid", &p.mgid}} {
		if o.set(g.name) {
			gid, err := saParseGID(o.val(g.name))
			if err != nil {
				return cmdutil.UsageErrorf("--%s: %v", g.name, err)
			}
			*g.dst = gid
		}
	}
	// Keys last: one given as something other than hex is asked for on
	// stdin, P_Key before Q_Key as the C tool asks.
	for _, k := range []struct {
		name, prompt string
		set          func(uint64)
	}{
		{"pkey", "P_Key: ", func(v uint64) { p.pkey = uint16(v) }},
		{"qkey", "Q_Key: ", func(v uint64) { p.qkey = uint32(v) }},
	} {
		if o.set(k.name) {
			s, err := q.keyArg(k.name, k.prompt)
			if err != nil {
				return err
			}
			v, _ := ctext.Strtoul(s)
			k.set(v)
		}
	}
	if o.set("src-to-dst") {
		if !strings.Contains(o.val("src-to-dst"), ":") {
			return cmdutil.UsageErrorf("--src-to-dst takes <src:dst>")
		}
		if o.flags["src-to-dst"].at > o.flags["numb_path"].at {
			p.numbPath = 0x7f
		}
	}
	if o.set("sgid-to-dgid") {
		s, d, ok := strings.Cut(o.val("sgid-to-dgid"), "-")
		if !ok {
			return cmdutil.UsageErrorf("--sgid-to-dgid takes <sgid-dgid>")
		}
		sgid, err := saParseGID(s)
		if err != nil {
			return cmdutil.UsageErrorf("--sgid-to-dgid: %v", err)
		}
		dgid, err := saParseGID(d)
		if err != nil {
			return cmdutil.UsageErrorf("--sgid-to-dgid: %v", err)
		}
		at := o.flags["sgid-to-dgid"].at
		if at > o.flags["sgid"].at {
			p.sgid = sgid
		}
		if at > o.flags["dgid"].at {
			p.dgid = dgid
		}
		if at > o.flags["numb_path"].at && at > o.flags["src-to-dst"].at {
			p.numbPath = 0x7f
		}
	}
	return nil
}

// keyArg returns a key option's value; one that does not start with a hex
// digit is asked for on stdin, as the C tool asks with getpass.
func (q *saQuery) keyArg(name, prompt string) (string, error) {
	s := q.opts.val(name)
	if s != "" && ctext.IsXDigit(s[0]) {
		return s, nil
	}
	fmt.Fprint(q.env.IO.Err, prompt)
	line, err := bufio.NewReader(q.env.IO.In).ReadString('\n')
	if err != nil && line == "" {
		return "", cmdutil.UsageErrorf("cannot get %s", strings.TrimSuffix(prompt, ": "))
	}
	return strings.TrimRight(line, "\r\n"), nil
}

// smKey is --smkey, else ibdiag.conf's sa_key, else 0 (untrusted).
func (q *saQuery) smKey() (uint64, error) {
	if q.opts.set("smkey") {
		s, err := q.keyArg("smkey", "SM_Key: ")
		if err != nil {
			return 0, err
		}
		v, _ := ctext.Strtoul(s)
		return v, nil
	}
	if q.opts.SAKey != "" {
		v, _ := ctext.Strtoul(q.opts.SAKey)
		return v, nil
	}
	return 0, nil
}

// saParseGID is inet_pton(AF_INET6, ...), with the error saquery prints.
func saParseGID(s string) (mad.GID, error) {
	g, ok := ctext.InetPton6(s)
	if !ok {
		return mad.GID{}, fmt.Errorf("bad GID %q (IPv6 form, e.g. fe80::2:c903:0:1234)", s)
	}
	return g, nil
}
