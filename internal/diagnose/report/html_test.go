package report

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ibtool/ibtool/internal/simfabric"
)

// chromium runs Debian's chromium headless on the page with args (and
// page's address last), in a profile of its own, with every host name
// unresolvable: the page must need no network.
func chromium(t *testing.T, args ...string) []byte {
	t.Helper()
	bin, err := exec.LookPath("chromium")
	if err != nil {
		simfabric.Missing(t, err) // make deps installs it; CI fails without
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--no-first-run", "--user-data-dir=" + t.TempDir(),
		"--host-resolver-rules=MAP * ~NOTFOUND"}
	cmd := exec.CommandContext(ctx, bin, append(base, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium %v: %v\n%s", args, err, stderr.String())
	}
	return out
}

func writePage(t *testing.T) string {
	t.Helper()
	r, f := sampleReport()
	var b bytes.Buffer
	if err := WriteHTML(&b, r, f, nil); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	// Self-contained: nothing to fetch.
	for _, ref := range []string{"src=", "href=", "url(", "@import", "<link", "fetch("} {
		if strings.Contains(page, ref) {
			t.Errorf("the page refers to something outside it: %q", ref)
		}
	}
	path := filepath.Join(t.TempDir(), "report.html")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// The page in a real browser: its script fills the summary and the
// findings table, draws the tiers with the findings' links marked, and
// the filter in the address leaves only the findings that match.
func TestHTMLInBrowser(t *testing.T) {
	path := writePage(t)
	dom := string(chromium(t, "--dump-dom", "file://"+path))
	count := func(re string) int { return len(regexp.MustCompile(re).FindAllString(dom, -1)) }
	if n := count(`<tr class="finding"`); n != 10 {
		t.Errorf("%d rows in the findings table, want 10", n)
	}
	if !strings.Contains(dom, `10 of 10 findings`) || count(`<td>not run: no expected fabric \(--expect\)</td>`) != 1 {
		t.Error("the counts or the summary are missing")
	}
	if n := count(`<g class="switch`); n != 4 {
		t.Errorf("%d switches drawn, want 4", n)
	}
	// The line of leaf1's two links to spine1, one of them with an error.
	if n := count(`<line class="link marked-error" data-a="0x0000000000000300" data-b="0x0000000000000500"`); n != 1 {
		t.Errorf("leaf1-spine1 marked %d times, want once\n%s", n, dom)
	}
	// leaf2's links to both spines (Init), host3's link (MTU), spine2.
	if n := count(`<line class="link marked-error" data-a="0x0000000000000400"`); n != 2 {
		t.Errorf("leaf2's uplinks marked %d times, want 2", n)
	}
	if count(`<g class="host marked-warning" data-guid="0x0000000000001030"`) != 1 {
		t.Error("host3's link to leaf2 is not drawn marked")
	}
	if count(`<g class="switch marked-info" data-guid="0x0000000000000600"`) != 1 {
		t.Error("spine2 is not marked")
	}
	if n := count(`class="link"`); n != 1 {
		t.Errorf("%d unmarked lines, want 1 (leaf1 to spine2)", n)
	}

	filtered := string(chromium(t, "--dump-dom", "file://"+path+"#links.port_init"))
	if n := strings.Count(filtered, `<tr class="finding" data-code="links.port_init"`); n != 6 || strings.Count(filtered, `<tr class="finding"`) != 6 ||
		!strings.Contains(filtered, "6 of 10 findings") {
		t.Errorf("filtered by code: %d rows", n)
	}
}

func TestHTMLScreenshot(t *testing.T) {
	path := writePage(t)
	shot := filepath.Join(t.TempDir(), "shot.png")
	chromium(t, "--screenshot="+shot, "--window-size=1200,900", "file://"+path)
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	// Not a blank page: the drawing's colours are in it.
	b := img.Bounds()
	colours := map[[3]uint32]bool{}
	for y := b.Min.Y; y < b.Max.Y; y += 3 {
		for x := b.Min.X; x < b.Max.X; x += 3 {
			r, g, bl, _ := img.At(x, y).RGBA()
			colours[[3]uint32{r >> 8, g >> 8, bl >> 8}] = true
		}
	}
	if b.Dx() != 1200 || len(colours) < 20 {
		t.Errorf("screenshot %v with %d colours: a blank page?", b, len(colours))
	}
}
