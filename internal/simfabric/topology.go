package simfabric

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// TopologyPath returns the path of a test topology by name, e.g. "tiny.net":
// ../shared/topologies/<name> beside the module root (the checkout), else
// testdata/topologies/<name> in the module (a few small ones, kept so the
// demo and basic tests work without ../shared). It panics with a message
// naming the places it looked if there is no such file, which fails the
// calling test clearly.
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
	candidates := []string{
		filepath.Join(root, "..", "shared", "topologies", name),
		filepath.Join(root, "testdata", "topologies", name),
	}
	for _, p := range candidates {
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return filepath.Clean(p), nil
		}
	}
	return "", fmt.Errorf("simfabric: topology %q not found; looked for %s and %s (the repo is expected to be checked out with ../shared beside it)",
		name, filepath.Clean(candidates[0]), candidates[1])
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
