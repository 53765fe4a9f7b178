package cli

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ibtool/ibtool/internal/cli/cmdutil"
	"github.com/ibtool/ibtool/internal/simfabric"
)

var updateGolden = flag.Bool("update", false, "rewrite the decode_mad golden files")

// decodeRun runs decode_mad in-process with stdin.
func decodeRun(stdin string, args ...string) cmdResult {
	var out, errOut bytes.Buffer
	env := &cmdutil.Env{IO: cmdutil.IO{In: strings.NewReader(stdin), Out: &out, Err: &errOut}}
	code := run(append([]string{"ibtool", "decode_mad"}, args...), env)
	return cmdResult{out.String(), errOut.String(), code}
}

const decodeDir = "testdata/decode_mad"

// The MADs in testdata/decode_mad were recorded from infiniband-diags 44
// tools on ibsim by capture.sh (NAME.cmd says which): NAME.mad holds the
// replies, NAME.send the requests after their umad headers, NAME.req
// saquery's requests. NAME.EXT.golden is decode_mad's output for each
// (--umad -v for .send, -v for the rest), reviewed by hand and rewritten
// with -update.
func TestDecodeMADGolden(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(decodeDir, "*.*"))
	n := 0
	for _, f := range files {
		ext := filepath.Ext(f)
		var args []string
		switch ext {
		case ".mad", ".req":
			args = []string{"-v"}
		case ".send":
			args = []string{"--umad", "-v"}
		default:
			continue
		}
		n++
		t.Run(filepath.Base(f), func(t *testing.T) {
			in, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			r := decodeRun(string(in), args...)
			if r.code != 0 || r.stderr != "" {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			golden := f + ".golden"
			if *updateGolden {
				if err := os.WriteFile(golden, []byte(r.stdout), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run the test with -update to create it)", err)
			}
			if r.stdout != string(want) {
				t.Errorf("output differs from %s:\n%s", golden, simfabric.UnifiedDiff("golden", "decode_mad", string(want), r.stdout))
			}
		})
	}
	if n < 10 {
		t.Fatalf("only %d captures in %s", n, decodeDir)
	}
}

var mkeyLine = regexp.MustCompile(`(?m)^(Mkey:\.+)0x[0-9a-f]{16}$`)

// What decode_mad -v prints as libibmad would is what the C smpquery
// printed for the same reply (its output is NAME.txt).
func TestDecodeMADMatchesSmpquery(t *testing.T) {
	for _, name := range []string{"dr_nodeinfo", "dr_portinfo"} {
		in, err := os.ReadFile(filepath.Join(decodeDir, name+".mad"))
		if err != nil {
			t.Fatal(err)
		}
		text, err := os.ReadFile(filepath.Join(decodeDir, name+".txt"))
		if err != nil {
			t.Fatal(err)
		}
		_, body, _ := strings.Cut(string(text), "\n") // the "# Node info: ..." title
		r := decodeRun(string(in), "-v")
		if dotted := dottedOf(r.stdout); dotted != body {
			t.Errorf("%s: the dotted form differs from smpquery's:\n%s", name, simfabric.UnifiedDiff("smpquery", "decode_mad", body, dotted))
		}
	}
	// Every capture of the mad package decodes, and its libibmad form is
	// what the C tool printed where that tool printed one attribute.
	files, _ := filepath.Glob("../mad/testdata/capture/*.mad")
	for _, f := range files {
		in, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		r := decodeRun(string(in), "-v")
		if r.code != 0 {
			t.Errorf("%s: exit %d: %s", f, r.code, r.stderr)
			continue
		}
		base := strings.TrimSuffix(f, ".mad")
		cmd, _ := os.ReadFile(base + ".cmd")
		text, _ := os.ReadFile(base + ".txt")
		if strings.HasPrefix(string(cmd), "smpquery ") && strings.Count(string(in), "--") == 0 && strings.HasPrefix(string(text), "# ") {
			_, body, _ := strings.Cut(string(text), "\n")
			dotted := dottedOf(r.stdout)
			if strings.Contains(string(cmd), " -K ") {
				_, dotted, _ = strings.Cut(r.stdout, "as libibmad prints it:\n")
			}
			if dotted != body {
				t.Errorf("%s: the dotted form differs from %s", f, cmd)
			}
		}
	}
}
