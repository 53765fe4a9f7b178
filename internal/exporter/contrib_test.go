package exporter

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/simfabric"
	"github.com/ibtool/ibtool/internal/umad/umadtest"
)

// The alerting rules and the Grafana dashboard shipped with the exporter
// (contrib/) are checked here: promtool checks the rules and runs their
// tests, checks every dashboard query as it checks a rule's, and neither
// may use a metric the exporter does not write.

func contribPath(t *testing.T, rel string) string {
	t.Helper()
	root, err := simfabric.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(root, "contrib", rel)
}

func promtool(t *testing.T, dir string, args ...string) {
	t.Helper()
	p, err := exec.LookPath("promtool")
	if err != nil {
		simfabric.Missing(t, fmt.Errorf("promtool not found (Debian package prometheus; make deps installs it): %v", err))
	}
	cmd := exec.Command(p, args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// The rules are valid, and each alert fires on the series it is about
// and not on the healthy ones (their promtool unit tests).
func TestAlertRules(t *testing.T) {
	dir := contribPath(t, "prometheus")
	promtool(t, dir, "check", "rules", "ibtool-exporter.rules.yml")
	promtool(t, dir, "test", "rules", "ibtool-exporter.rules.test.yml")
}

// dashboard is the part of Grafana's dashboard model the test reads.
type dashboard struct {
	Title  string
	Panels []struct {
		Type, Title string
		Targets     []struct{ Expr string }
	}
}

func readDashboard(t *testing.T) *dashboard {
	t.Helper()
	b, err := os.ReadFile(contribPath(t, "grafana/ibtool-exporter.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("the dashboard is not JSON: %v", err)
	}
	return &d
}

// Every dashboard query is valid PromQL (promtool checks it as a
// recording rule, with Grafana's variables filled in), and the dashboard
// has its three parts.
func TestDashboardQueries(t *testing.T) {
	d := readDashboard(t)
	var rows []string
	var rules strings.Builder
	rules.WriteString("groups:\n  - name: dashboard\n    rules:\n")
	n := 0
	for _, p := range d.Panels {
		if p.Type == "row" {
			rows = append(rows, p.Title)
		}
		for _, tg := range p.Targets {
			expr := strings.NewReplacer("$__rate_interval", "5m", "$job", ".*").Replace(tg.Expr)
			n++
			q, _ := json.Marshal(expr) // a JSON string is a YAML string
			fmt.Fprintf(&rules, "      - record: dashboard:query_%d\n        expr: %s\n", n, q)
		}
	}
	for _, want := range []string{"Fabric overview", "Worst ports by error rate", "Link utilisation"} {
		if !slices.Contains(rows, want) {
			t.Errorf("the dashboard has no %q row (rows: %q)", want, rows)
		}
	}
	if n < 10 {
		t.Fatalf("only %d queries in the dashboard", n)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "dashboard.rules.yml"), []byte(rules.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	promtool(t, dir, "check", "rules", "dashboard.rules.yml")
}

var metricRE = regexp.MustCompile(`\bib(tool)?_[a-z0-9_]+`)

// The rules and the dashboard use only metrics the exporter writes: the
// names of a scrape with every collector on and a port failing.
func TestContribUsesOurMetrics(t *testing.T) {
	f := newTestFabric(t)
	e := f.exporter(Collectors{Counters: true, Links: true, ErrorDetails: true}, Shard{})
	if err := e.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	f.pmas.Of(f.a).Fail(mad.AttrPortCountersExtended, 1, umadtest.StatusInvalidField)
	ours := map[string]bool{}
	for _, line := range strings.Split(scrape(t, e), "\n") {
		if name, ok := strings.CutPrefix(line, "# TYPE "); ok {
			ours[strings.Fields(name)[0]] = true
		}
	}
	for _, name := range []string{"ib_port_scrape_error", "ib_port_link_degraded", "ib_port_transmit_wait_total", "ib_port_looping_errors_total"} {
		if !ours[name] {
			t.Fatalf("the scrape lacks %s: the test would check nothing", name)
		}
	}
	rules, err := os.ReadFile(contribPath(t, "prometheus/ibtool-exporter.rules.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var queries []string
	for _, p := range readDashboard(t).Panels {
		for _, tg := range p.Targets {
			queries = append(queries, tg.Expr)
		}
	}
	for what, text := range map[string]string{"the rules": string(rules), "the dashboard": strings.Join(queries, "\n")} {
		used := metricRE.FindAllString(text, -1)
		if len(used) == 0 {
			t.Errorf("%s use no metric", what)
		}
		for _, name := range used {
			if !ours[name] {
				t.Errorf("%s use %s, which the exporter does not write", what, name)
			}
		}
	}
}
