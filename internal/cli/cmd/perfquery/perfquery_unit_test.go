package perfquery

import (
	"strings"
	"testing"

	"github.com/ibtool/ibtool/internal/mad"
)

// libibmad writes dumps into a fixed buffer; what does not fit is cut.
func TestIbmadBuffer(t *testing.T) {
	line := "PortSelect:......................1" // 34 bytes
	text := strings.Repeat(line+"\n", 4)
	if got := ibmadBuffer(text, 1536); got != text {
		t.Errorf("fits: %q", got)
	}
	// 100 bytes: two whole lines (35 each) leave 30, too few for a third.
	if got := ibmadBuffer(text, 100); got != line+"\n"+line+"\n" {
		t.Errorf("100: %q", got)
	}
	// 105: 35 left, more than 32: the third line is cut to 33 bytes.
	if got := ibmadBuffer(text, 105); got != line+"\n"+line+"\n"+line[:33]+"\n" {
		t.Errorf("105: %q", got)
	}
	// -T's 40 lines with every counter at its largest overflow 1536 bytes.
	esc := mad.PortExtendedSpeedsCounters{PortSelect: 255, CounterSelect: ^uint64(0), SyncHeaderErrorCounter: 65535, UnknownBlockCounter: 65535}
	for i := range esc.ErrorDetectionCounter {
		esc.ErrorDetectionCounter[i] = 65535
		esc.FECCorrectableBlockCtr[i] = 4294967295
		esc.FECUncorrectableBlockCtr[i] = 4294967295
	}
	full := mad.Dotted(&esc, nil)
	got := ibmadBuffer(full, 1536)
	if len(full) <= 1536 || len(got) > 1535 || !strings.HasPrefix(full, got[:len(got)-1]) {
		t.Errorf("-T: %d bytes, cut to %d: %q", len(full), len(got), got[len(got)-80:])
	}
}

// Every counter group names a PerfMgt attribute of internal/mad.
func TestPerfGroupsAreAttributes(t *testing.T) {
	for _, g := range perfGroups {
		d := mad.LookupStruct(g.attr)
		if d == nil || !d.IsAttribute || d.Classes[0] != mad.ClassPerf || d.New == nil {
			t.Errorf("--%s: %s is not a PerfMgt attribute: %+v", g.long, g.attr, d)
		}
	}
}
