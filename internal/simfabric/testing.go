package simfabric

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// StartT starts a fabric for a test and stops it when the test ends.
// topology is a net file path or a name for TopologyPath ("tiny.net").
// When ibsim or OpenSM is not installed the test is skipped, except under
// CI=true, where it fails: CI must run the simulator tests.
func StartT(t testing.TB, topology string) *Fabric {
	t.Helper()
	return StartOptsT(t, Options{Topology: topology})
}

// StartOptsT is StartT with all the Options.
func StartOptsT(t testing.TB, opts Options) *Fabric {
	t.Helper()
	RequireSim(t, !opts.NoSM)
	if !strings.ContainsRune(opts.Topology, filepath.Separator) {
		if _, err := os.Stat(opts.Topology); err != nil {
			p, err := findTopology(opts.Topology)
			if err != nil {
				t.Fatal(err)
			}
			opts.Topology = p
		}
	}
	f, err := Start(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := f.Stop(); err != nil {
			t.Error(err)
		}
	})
	return f
}

// RequireSim skips the test (fails it under CI=true) unless ibsim, umad2sim
// and, if withSM, OpenSM are installed.
func RequireSim(t testing.TB, withSM bool) {
	t.Helper()
	if err := Available(withSM); err != nil {
		missing(t, err)
	}
}

// RequireTools is RequireSim for infiniband-diags C tools used with RunC.
func RequireTools(t testing.TB, tools ...string) {
	t.Helper()
	var errs []error
	for _, tool := range tools {
		if _, err := lookBinary(tool); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		missing(t, err)
	}
}

// Missing skips a test that lacks something it needs, except under CI=true,
// where everything the project installs must be there and the test fails.
func Missing(t testing.TB, err error) {
	t.Helper()
	missing(t, err)
}

func missing(t testing.TB, err error) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("%v\n(CI=true: the simulator tests must run; install ibsim-utils, opensm and infiniband-diags)", err)
	}
	t.Skipf("skipping: %v", err)
}
