package cache

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/mad"
)

// CompanionSuffix names a cache's companion file: "<path>.ibtool" holds
// what the libibnetdisc format cannot (see the package doc).
const CompanionSuffix = ".ibtool"

// Companion identification.
const (
	companionFormat  = "ibtool-cache-companion"
	companionVersion = 1
)

// Attribute names in a companion's "missing" lists.
const (
	attrNodeInfo   = "NodeInfo"
	attrNodeDesc   = "NodeDescription"
	attrSwitchInfo = "SwitchInfo"
)

// companion is the JSON document in "<path>.ibtool". docs/cache.md
// documents it.
type companion struct {
	Format  string `json:"format"`
	Version int    `json:"version"`
	// CacheSize and CacheSHA256 identify the main file this belongs to.
	CacheSize   int                  `json:"cache_size"`
	CacheSHA256 string               `json:"cache_sha256"`
	Nodes       []companionNode      `json:"nodes,omitempty"`
	WalkErrors  []companionWalkError `json:"walk_errors,omitempty"`
}

type companionNode struct {
	GUID   string `json:"node_guid"`
	DRPath string `json:"dr_path,omitempty"`
	// Missing lists the node attributes that were not read; the main file
	// holds zeros for them.
	Missing []string `json:"missing,omitempty"`
	// PortsWithoutPortInfo lists the ports whose PortInfo was not read.
	PortsWithoutPortInfo []int `json:"ports_without_portinfo,omitempty"`
}

type companionWalkError struct {
	DRPath string `json:"dr_path"`
	What   string `json:"what"`
	Error  string `json:"error"`
}

// makeCompanion collects what f knows beyond the main file, or returns nil
// when there is nothing.
func makeCompanion(f *discovery.Fabric, main []byte) *companion {
	c := &companion{}
	for _, n := range f.Nodes {
		cn := companionNode{GUID: guidString(n.GUID), DRPath: mad.FormatDRPath(n.DRPath)}
		if len(n.NodeInfo) == 0 {
			cn.Missing = append(cn.Missing, attrNodeInfo)
		}
		if len(n.NodeDesc) == 0 {
			cn.Missing = append(cn.Missing, attrNodeDesc)
		}
		if n.Type == discovery.NodeSwitch && len(n.SwitchInfo) == 0 {
			cn.Missing = append(cn.Missing, attrSwitchInfo)
		}
		for num, p := range n.Ports {
			if p != nil && num <= n.NumPorts && len(p.PortInfo) == 0 {
				cn.PortsWithoutPortInfo = append(cn.PortsWithoutPortInfo, num)
			}
		}
		if cn.DRPath != "" || cn.Missing != nil || cn.PortsWithoutPortInfo != nil {
			c.Nodes = append(c.Nodes, cn)
		}
	}
	for _, e := range f.Errors {
		if e == nil {
			continue
		}
		we := companionWalkError{DRPath: mad.FormatDRPath(e.DRPath), What: e.What}
		if e.Err != nil {
			we.Error = e.Reason()
		}
		c.WalkErrors = append(c.WalkErrors, we)
	}
	if c.Nodes == nil && c.WalkErrors == nil {
		return nil
	}
	sum := sha256.Sum256(main)
	c.Format, c.Version = companionFormat, companionVersion
	c.CacheSize, c.CacheSHA256 = len(main), hex.EncodeToString(sum[:])
	return c
}

func (c *companion) marshal() []byte {
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		panic(err) // plain strings and ints: cannot fail
	}
	return append(b, '\n')
}

// applyCompanion adds a companion's data to f, decoded from main. It
// returns false (and changes nothing) when the companion is not for this
// main file or is of a format or version it does not know; an error when
// it is for this file but wrong.
func applyCompanion(f *discovery.Fabric, main, data []byte, name string) (bool, error) {
	var head struct {
		Format      string `json:"format"`
		Version     int    `json:"version"`
		CacheSize   int    `json:"cache_size"`
		CacheSHA256 string `json:"cache_sha256"`
	}
	var object map[string]json.RawMessage
	if err := json.Unmarshal(data, &object); err != nil || object == nil {
		// null, [] or 3 are JSON, but no companion of any version.
		return false, fmt.Errorf("cache companion %s: not a JSON object (remove it to load the cache without DR paths)", name)
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return false, fmt.Errorf("cache companion %s: %v (remove it to load the cache without DR paths)", name, err)
	}
	if head.Format != companionFormat || head.Version != companionVersion {
		return false, nil
	}
	sum := sha256.Sum256(main)
	if head.CacheSize != len(main) || head.CacheSHA256 != hex.EncodeToString(sum[:]) {
		return false, nil // stale: the main file was rewritten without it
	}
	var c companion
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return false, fmt.Errorf("cache companion %s: %v", name, err)
	}
	// Check everything before changing f.
	type change struct {
		n    *discovery.Node
		path []byte
		cn   *companionNode
	}
	var changes []change
	listed := map[uint64]int{} // node GUID -> its place in the list
	routes := map[string]int{} // DR path -> the node it leads to
	for i := range c.Nodes {
		cn := &c.Nodes[i]
		fail := func(format string, args ...any) (bool, error) {
			return false, fmt.Errorf("cache companion %s: node %d (%s): %s", name, i+1, cn.GUID, fmt.Sprintf(format, args...))
		}
		guid, err := strconv.ParseUint(strings.TrimPrefix(cn.GUID, "0x"), 16, 64)
		if err != nil || !strings.HasPrefix(cn.GUID, "0x") {
			return fail("bad node GUID")
		}
		n := f.Node(guid)
		if n == nil {
			return fail("no such node in the cache")
		}
		if j, dup := listed[guid]; dup {
			return fail("listed twice (also node %d)", j)
		}
		listed[guid] = i + 1
		path, err := parseDRPath(cn.DRPath)
		if err != nil {
			return fail("%v", err)
		}
		if j, dup := routes[cn.DRPath]; dup && cn.DRPath != "" {
			return fail("DR path %s leads to node %d too; a route leads to one node", cn.DRPath, j)
		}
		routes[cn.DRPath] = i + 1
		for _, a := range cn.Missing {
			if a != attrNodeInfo && a != attrNodeDesc && a != attrSwitchInfo {
				return fail("unknown attribute %q", a)
			}
		}
		for _, num := range cn.PortsWithoutPortInfo {
			if n.Port(num) == nil {
				return fail("no port %d", num)
			}
		}
		changes = append(changes, change{n, path, cn})
	}
	for _, ch := range changes {
		ch.n.DRPath = ch.path
		for _, a := range ch.cn.Missing {
			switch a {
			case attrNodeInfo:
				ch.n.NodeInfo = nil
			case attrNodeDesc:
				ch.n.NodeDesc = nil
			case attrSwitchInfo:
				ch.n.SwitchInfo = nil
			}
		}
		for _, num := range ch.cn.PortsWithoutPortInfo {
			ch.n.Ports[num].PortInfo = nil
		}
	}
	for _, we := range c.WalkErrors {
		path, err := parseDRPath(we.DRPath)
		if err != nil {
			return false, fmt.Errorf("cache companion %s: walk error %q: %v", name, we.What, err)
		}
		f.Errors = append(f.Errors, &discovery.WalkError{DRPath: path, What: we.What, Err: errors.New(we.Error)})
	}
	return true, nil
}

func guidString(g uint64) string { return fmt.Sprintf("0x%016x", g) }

// maxDRHops is the longest directed route (IBA 14.2.1.2).
const maxDRHops = 63

// parseDRPath reads mad.FormatDRPath's "0,1,4" ("" is no path): the local
// port 0, then at most 63 hops of ports 0..254 (the walk's route of the
// local switch is "0,0").
func parseDRPath(s string) ([]byte, error) {
	if s == "" {
		return nil, nil
	}
	parts := strings.Split(s, ",")
	if len(parts)-1 > maxDRHops {
		return nil, fmt.Errorf("bad DR path of %d hops: at most %d", len(parts)-1, maxDRHops)
	}
	path := make([]byte, len(parts))
	for i, p := range parts {
		v, err := strconv.ParseUint(p, 10, 8)
		if err != nil || (i == 0 && v != 0) || v == 255 {
			return nil, fmt.Errorf("bad DR path %q", s)
		}
		path[i] = byte(v)
	}
	return path, nil
}
