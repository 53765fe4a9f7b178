package cli

import (
	"bufio"
	"bytes"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The layers of docs/architecture.md, held against the imports of the
// packages as `go list` sees them:
//   - the root (internal/cli) imports the command packages, they import
//     cmdutil and render, and nothing under internal/cli imports upwards:
//     at most 3 levels;
//   - no command package imports another;
//   - render and cmdutil do not import each other;
//   - nothing outside internal/cli (and cmd/ibtool, cmd/ibtool-man, which
//     are its main packages) imports it.
const (
	modulePath = "github.com/ibtool/ibtool"
	cliPkg     = modulePath + "/internal/cli"
	cmdPkgs    = cliPkg + "/cmd/"
	cmdutilPkg = cliPkg + "/cmdutil"
	renderPkg  = cliPkg + "/render"
	maxDepth   = 3
)

// layoutImports maps each package of the module to its imports within the
// module.
func layoutImports(t *testing.T) map[string][]string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "./...")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	imports := map[string][]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		var own []string
		for _, imp := range f[1:] {
			if strings.HasPrefix(imp, modulePath+"/") {
				own = append(own, imp)
			}
		}
		imports[f[0]] = own
	}
	if len(imports[cliPkg]) == 0 {
		t.Fatalf("go list found no imports of %s: %s", cliPkg, out)
	}
	return imports
}

func TestLayout(t *testing.T) {
	for _, err := range layoutViolations(layoutImports(t)) {
		t.Error(err)
	}
}

// underCLI says whether pkg is internal/cli or below it.
func underCLI(pkg string) bool { return pkg == cliPkg || strings.HasPrefix(pkg, cliPkg+"/") }

// layoutViolations lists every import that breaks the rules above.
func layoutViolations(imports map[string][]string) []string {
	var bad []string
	for pkg, imps := range imports {
		for _, imp := range imps {
			if msg := layoutRule(pkg, imp); msg != "" {
				bad = append(bad, pkg+" imports "+imp+": "+msg)
			}
		}
	}
	for pkg := range imports {
		if d := cliDepth(imports, pkg, nil); underCLI(pkg) && d > maxDepth {
			bad = append(bad, pkg+": a chain of "+strconv.Itoa(d)+" CLI packages starts here; the CLI has 3 levels (root, commands, cmdutil/render)")
		}
	}
	return bad
}

// layoutRule is why pkg may not import imp, "" if it may.
func layoutRule(pkg, imp string) string {
	switch {
	case !underCLI(imp):
		return ""
	case strings.HasPrefix(pkg, modulePath+"/cmd/ibtool"):
		return "" // the binaries' main packages run the CLI
	case !underCLI(pkg):
		return "nothing below the CLI imports it"
	case imp == cliPkg:
		return "only the binaries import the root"
	case strings.HasPrefix(pkg, cmdPkgs) && strings.HasPrefix(imp, cmdPkgs):
		return "a command package imports another command package; move what they share to cmdutilPkg, renderPkg or a package below the CLI"
	case (pkg == cmdutilPkg || pkg == renderPkg) && strings.HasPrefix(imp, cmdPkgs):
		return "shared packages are below the commands"
	case pkg == cmdutilPkg && imp == renderPkg, pkg == renderPkg && imp == cmdutilPkg:
		return "cmdutil and render are one level, beside each other"
	}
	return ""
}

// cliDepth is the number of CLI packages on the longest import chain from
// pkg through CLI packages.
func cliDepth(imports map[string][]string, pkg string, seen map[string]bool) int {
	if !underCLI(pkg) {
		return 0
	}
	if seen == nil {
		seen = map[string]bool{}
	}
	if seen[pkg] {
		return 0 // go rejects cycles; a test must still end
	}
	seen[pkg] = true
	defer delete(seen, pkg)
	deepest := 0
	for _, imp := range imports[pkg] {
		deepest = max(deepest, cliDepth(imports, imp, seen))
	}
	return 1 + deepest
}

// The rules themselves fail on the imports they forbid, naming them.
func TestLayoutRulesNameTheOffendingImport(t *testing.T) {
	for _, tc := range []struct {
		pkg, imp, want string
	}{
		{cmdPkgs + "perfquery", cmdPkgs + "smpquery", "command package imports another"},
		{modulePath + "/internal/exporter", cmdutilPkg, "nothing below the CLI"},
		{modulePath + "/internal/query", cliPkg, "nothing below the CLI"},
		{renderPkg, cmdutilPkg, "beside each other"},
		{cmdutilPkg, cmdPkgs + "ibnetdiscover", "below the commands"},
		{cmdPkgs + "perfquery", cliPkg, "only the binaries"},
	} {
		got := layoutViolations(map[string][]string{tc.pkg: {tc.imp}, cliPkg: {cmdPkgs + "x"}})
		if len(got) != 1 || !strings.Contains(got[0], tc.pkg+" imports "+tc.imp) || !strings.Contains(got[0], tc.want) {
			t.Errorf("%s -> %s: got %q, want one violation naming the import and %q", tc.pkg, tc.imp, got, tc.want)
		}
	}
	ok := map[string][]string{
		cliPkg:                     {cmdPkgs + "perfquery", cmdutilPkg},
		cmdPkgs + "perfquery":      {cmdutilPkg, renderPkg, modulePath + "/internal/counters"},
		renderPkg:                  {modulePath + "/internal/linkrate"},
		modulePath + "/cmd/ibtool": {cliPkg, cmdutilPkg},
	}
	if got := layoutViolations(ok); len(got) != 0 {
		t.Errorf("the allowed layout is refused: %q", got)
	}
	deep := map[string][]string{cliPkg: {cmdPkgs + "a"}, cmdPkgs + "a": {cmdutilPkg}, cmdutilPkg: {cliPkg + "/extra"}}
	if got := layoutViolations(deep); len(got) == 0 || !strings.Contains(strings.Join(got, "\n"), "3 levels") {
		t.Errorf("a fourth level is not refused: %q", got)
	}
}
