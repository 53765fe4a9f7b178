// Command gen writes internal/mad/zz_generated.go (types, codecs, field
// tables) and zz_generated_fuzz_test.go (a fuzz target per structure) from
// internal/mad/spec. It runs from `go generate ./...` (see generate.go).
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/ibtool/ibtool/internal/mad/internal/specgen"
)

func main() {
	specDir := flag.String("spec", "spec", "directory of .spec files")
	out := flag.String("out", "zz_generated.go", "generated Go file")
	fuzzOut := flag.String("fuzzout", "zz_generated_fuzz_test.go", "generated fuzz test file")
	flag.Parse()
	if err := run(*specDir, *out, *fuzzOut); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(specDir, out, fuzzOut string) error {
	spec, err := specgen.ParseDir(specDir)
	if err != nil {
		return err
	}
	src, err := specgen.Generate(spec)
	if err != nil {
		return err
	}
	fuzz, err := specgen.GenerateFuzz(spec)
	if err != nil {
		return err
	}
	if err := os.WriteFile(out, src, 0o644); err != nil {
		return err
	}
	return os.WriteFile(fuzzOut, fuzz, 0o644)
}
