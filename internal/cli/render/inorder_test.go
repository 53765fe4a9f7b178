package render

import (
	"bufio"
	"bytes"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"
)

func TestSplitByCost(t *testing.T) {
	unit := func(int) int { return 1 }
	for _, tc := range []struct {
		n, parts int
		cost     func(int) int
		want     []int
	}{
		{10, 2, unit, []int{0, 10}},                           // too small to split
		{minParallelCost, 1, unit, []int{0, minParallelCost}}, // one CPU
		{minParallelCost, 2, unit, []int{0, minParallelCost / 2, minParallelCost}},
		{minParallelCost, 4, unit, []int{0, minParallelCost / 4, minParallelCost / 2, 3 * minParallelCost / 4, minParallelCost}},
		// A heavy first item is a run of its own.
		{101, 2, func(i int) int { return map[bool]int{true: 3 * minParallelCost, false: 1}[i == 0] }, []int{0, 1, 101}},
		// A heavy last item leaves everything before it in the first run.
		{101, 2, func(i int) int { return map[bool]int{true: 3 * minParallelCost, false: 1}[i == 100] }, []int{0, 101}},
	} {
		if got := splitByCost(tc.n, tc.cost, tc.parts); !slices.Equal(got, tc.want) {
			t.Errorf("splitByCost(%d, parts %d) = %v, want %v", tc.n, tc.parts, got, tc.want)
		}
	}
}

// The text comes out in the items' order whether or not it was formatted
// on several goroutines.
func TestFormatInOrder(t *testing.T) {
	for _, n := range []int{0, 5, 3 * minParallelCost} {
		var want strings.Builder
		for i := range n {
			fmt.Fprintf(&want, "item %d\n", i)
		}
		var out bytes.Buffer
		w := bufio.NewWriter(&out)
		formatInOrder(w, n, func(int) int { return 1 }, func(w *bufio.Writer, lo, hi int) {
			for i := lo; i < hi; i++ {
				fmt.Fprintf(w, "item %d\n", i)
			}
		})
		w.Flush()
		if out.String() != want.String() {
			t.Errorf("%d items: the text is out of order or incomplete (%d bytes, want %d)", n, out.Len(), want.Len())
		}
	}
}

// A panic while formatting on another goroutine reaches the caller's, where
// main reports it, instead of killing the process unreported.
func TestFormatInOrderPanic(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	defer func() {
		if r := recover(); r != "boom" {
			t.Errorf("recovered %v, want the worker's panic", r)
		}
	}()
	w := bufio.NewWriter(&bytes.Buffer{})
	formatInOrder(w, 2*minParallelCost, func(int) int { return 1 }, func(w *bufio.Writer, lo, hi int) {
		if lo > 0 {
			panic("boom")
		}
	})
	t.Error("no panic")
}
