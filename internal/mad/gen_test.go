package mad

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/ibtool/ibtool/internal/mad/internal/specgen"
)

// The checked-in generated files must be what the generator makes from
// the checked-in spec: run `go generate ./internal/mad` after editing spec.
func TestGeneratedFilesAreFresh(t *testing.T) {
	spec, err := specgen.ParseDir("spec")
	if err != nil {
		t.Fatal(err)
	}
	src, err := specgen.Generate(spec)
	if err != nil {
		t.Fatal(err)
	}
	fuzz, err := specgen.GenerateFuzz(spec)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for name, fresh := range map[string][]byte{"zz_generated.go": src, "zz_generated_fuzz_test.go": fuzz} {
		if err := os.WriteFile(filepath.Join(dir, name), fresh, 0o644); err != nil {
			t.Fatal(err)
		}
		checkedIn, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(checkedIn, fresh) {
			t.Errorf("%s is stale (fresh copy in %s): run go generate ./internal/mad", name, dir)
		}
		if !bytes.HasPrefix(checkedIn, []byte(specgen.Header+"\n")) {
			t.Errorf("%s lacks the generated-code header", name)
		}
	}
}
