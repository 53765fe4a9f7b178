package simfabric

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// The tests' fat trees and torus are topogen presets, kept in
// testdata/topologies so that anyone can read them and start them by
// hand; TestGeneratedTopologies checks that they are what the generator
// makes today.
//go:generate go run ../../cmd/ibtopogen -preset S50 -o ../../testdata/topologies/fattree-50.net
//go:generate go run ../../cmd/ibtopogen -preset S200 -o ../../testdata/topologies/fattree-200.net
//go:generate go run ../../cmd/ibtopogen -preset torus-3x3 -o ../../testdata/topologies/torus-3x3.net

// IbsimExamples is where Debian's ibsim-utils installs the example fabrics
// of ibsim's source.
const IbsimExamples = "/usr/share/doc/ibsim-utils/net-examples"

// ibsimExamples maps the names the tests give ibsim's examples to their
// files in IbsimExamples: small fabrics with parallel switch links, 2-port
// CAs and a switch without hosts.
var ibsimExamples = map[string]string{
	"ibsim-net.net":               "net",
	"ibsim-net1.net":              "net.1",
	"ibsim-2sw2path.net":          "net.2sw2path",
	"ibsim-2sw2path4hca.net":      "net.2sw2path4hca",
	"ibsim-2sw2path4hca2port.net": "net.2sw2path4hca2port",
}

// TopologyPath returns the path of a test topology by name, e.g.
// "tiny.net": testdata/topologies/<name> in the module (the project's
// own, hand-written or generated), or one of ibsim's examples as the
// ibsim-utils package installs them ("ibsim-net.net" is its "net"). It
// panics with a message naming where it looked if there is no such file,
// which fails the calling test clearly.
func TopologyPath(name string) string {
	p, err := findTopology(name)
	if err != nil {
		panic(err.Error())
	}
	return p
}

func findTopology(name string) (string, error) {
	root, err := ModuleRoot()
	if err != nil {
		return "", err
	}
	own := filepath.Join(root, "testdata", "topologies", name)
	if isFile(own) {
		return own, nil
	}
	if example, ok := ibsimExamples[name]; ok {
		p := filepath.Join(IbsimExamples, example)
		if isFile(p) {
			return p, nil
		}
		return "", fmt.Errorf("simfabric: topology %q is ibsim's example %s, which is not there (install ibsim-utils: make deps; a dpkg path-exclude of /usr/share/doc drops it)", name, p)
	}
	examples := slices.Sorted(maps.Keys(ibsimExamples))
	return "", fmt.Errorf("simfabric: topology %q not found: not in %s, nor one of ibsim's examples (%s)", name, filepath.Dir(own), strings.Join(examples, ", "))
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

// ModuleRoot is the directory of the go.mod above the working directory
// (tests run in their package's directory).
func ModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("simfabric: no go.mod above the working directory")
		}
		dir = parent
	}
}
