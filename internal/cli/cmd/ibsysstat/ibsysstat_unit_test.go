package ibsysstat

import (
	"strconv"
	"strings"
	"testing"
)

// The C server's cpu text: a line per processor, the values as they follow
// the colon in /proc/cpuinfo.
func TestSysstatCPUText(t *testing.T) {
	text := sysstatCPUText()
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if len(lines) == 0 || !strings.HasSuffix(text, "\n") {
		t.Fatalf("%q", text)
	}
	for i, l := range lines {
		if !strings.HasPrefix(l, "cpu "+strconv.Itoa(i)+": model ") || !strings.Contains(l, " MHZ ") {
			t.Errorf("line %d: %q", i, l)
		}
	}
}
