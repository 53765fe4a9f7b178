package packaging

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/ibtool/ibtool/internal/simfabric"
)

// outside matches a reference to the workspace this project was started
// in, beside the checkout: a relative path up into it, the same path built
// from parts, or one of its directories of notes. (Written so that this
// file does not match itself.)
var outside = regexp.MustCompile(`\.\./` + `shared\b|"\.\.", "shared"|(^|[^\w.-])shared/(reference|topologies|tools)/`)

// TestNothingReachesOutsideTheRepository: a clone of the repository is all
// a user has, so no tracked file may send them, or a test or script,
// to files beside it.
func TestNothingReachesOutsideTheRepository(t *testing.T) {
	repo, err := simfabric.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("git", "-C", repo, "ls-files", "-z").Output()
	if err != nil {
		simfabric.Missing(t, err) // not a git checkout, or no git
		return
	}
	files := bytes.Split(bytes.TrimSuffix(out, []byte{0}), []byte{0})
	if len(files) < 100 {
		t.Fatalf("git ls-files lists %d files", len(files))
	}
	for _, name := range files {
		path := filepath.Join(repo, string(name))
		f, err := os.Open(path)
		if err != nil {
			if os.IsNotExist(err) {
				continue // deleted in the work tree, not yet in the index
			}
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<24)
		for line := 1; sc.Scan(); line++ {
			if bytes.Contains(sc.Bytes(), []byte("shared")) && outside.Match(sc.Bytes()) {
				t.Errorf("%s:%d refers outside the repository: %s", name, line, bytes.TrimSpace(sc.Bytes()))
			}
		}
		if err := sc.Err(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		f.Close()
	}
}

func TestOutsidePattern(t *testing.T) {
	// Each case is split so that this file does not match itself.
	for s, want := range map[string]bool{
		"see ../" + "shared/DESIGN.md":                      true,
		`filepath.Join(root, "..", ` + `"shared", "tools")`: true,
		"follows shared" + "/reference/softroce-vm.md":      true,
		"run x/shared" + "/tools/gen.py":                    true,
		"/usr/share/doc/ibsim-utils/net-examples":           false,
		"a shared fabric, sharedFabric(t, \"tiny.net\")":    false,
		"testdata/topologies/tiny.net":                      false,
	} {
		if got := outside.MatchString(s); got != want {
			t.Errorf("%q: %v, want %v", s, got, want)
		}
	}
}
