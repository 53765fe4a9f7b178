package diagnose

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"

	"github.com/ibtool/ibtool/internal/cache"
	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/linkrate"
	"github.com/ibtool/ibtool/internal/topofile"
)

// Expected is the fabric as it was: a cache (ibnetdiscover --cache, or
// the fabric.cache of an --output-dir) or ibnetdiscover's topology text.
type Expected struct {
	// Kind is "cache" or "topology".
	Kind   string
	Fabric *discovery.Fabric
	// Data is the file as read, kept so that an --output-dir can hold a
	// copy.
	Data []byte
	text *topofile.File // the topology text's rates; nil for a cache
}

// LoadExpected reads an expected fabric, telling a cache from a topology
// file by the cache's magic number.
func LoadExpected(path string) (*Expected, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if isCache(data) {
		f, err := cache.Read(path)
		if err != nil {
			return nil, err
		}
		return &Expected{Kind: "cache", Fabric: f, Data: data}, nil
	}
	t, err := topofile.Parse(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%s: neither a cache nor a topology file: %w", path, err)
	}
	return &Expected{Kind: "topology", Fabric: t.Fabric, Data: data, text: t}, nil
}

// isCache tells a libibnetdisc cache by its first word.
func isCache(data []byte) bool {
	return len(data) >= 4 && (binary.LittleEndian.Uint32(data) == cache.Magic || binary.BigEndian.Uint32(data) == cache.Magic)
}

// rate is the width and speed of a port of either fabric, as
// ibnetdiscover names them: from the topology text for its own ports,
// else from the port's PortInfo.
func (e *Expected) rate(p *discovery.Port) discovery.LinkRate {
	if e != nil && e.text != nil {
		if r, ok := e.text.Rates[p]; ok {
			return r
		}
	}
	r := linkrate.Of(p)
	return discovery.LinkRate{Width: r.CompatWidth(), Speed: r.CompatSpeed()}
}
