package topology

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/nodename"
)

// Formats are the export formats, the default first.
var Formats = []string{"slurm", "slurm-yaml", "dot"}

// CheckFormat says what is wrong with format, nil when it is one of
// Formats.
func CheckFormat(format string) error {
	if !slices.Contains(Formats, format) {
		return fmt.Errorf("invalid --format %q: %s", format, strings.Join(Formats, ", "))
	}
	return nil
}

// Write writes the fabric f, whose tree is t, in format: topology.conf
// (slurm), topology.yaml (slurm-yaml) or a Graphviz graph (dot).
func Write(w io.Writer, format string, f *discovery.Fabric, t *Tree, names *nodename.Map) error {
	switch format {
	case "slurm":
		return t.WriteSlurm(w)
	case "slurm-yaml":
		return t.WriteSlurmYAML(w)
	case "dot":
		return WriteDOT(w, f, names)
	}
	return CheckFormat(format)
}
