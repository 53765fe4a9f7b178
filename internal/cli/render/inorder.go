package render

import (
	"bufio"
	"bytes"
	"sync"

	"github.com/ibtool/ibtool/internal/procs"
)

// minParallelCost is the smallest text, in cost units (about one line
// each), that formatInOrder spreads over several goroutines.
const minParallelCost = 4096

// formatInOrder writes the text of n items to w in their order. A big
// fabric's text is formatted after its walk, when the simulator and the
// network no longer need the CPUs: the items are cut into one run of
// about equal cost per CPU, each run is formatted on its own goroutine
// (the first straight into w, the others into buffers), and the buffers
// follow in order. cost(i) is item i's share of the text, format writes
// items lo to hi-1; format must be safe to run on several goroutines at
// once, each with its own writer.
func formatInOrder(w *bufio.Writer, n int, cost func(i int) int, format func(w *bufio.Writer, lo, hi int)) {
	cpus, restore := procs.AllCPUs()
	defer restore()
	bounds := splitByCost(n, cost, cpus)
	if len(bounds) <= 2 {
		format(w, 0, n)
		return
	}
	bufs := make([]bytes.Buffer, len(bounds)-2)
	panics := make([]any, len(bufs))
	var wg sync.WaitGroup
	for i := range bufs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { panics[i] = recover() }()
			bw := bufio.NewWriter(&bufs[i])
			format(bw, bounds[i+1], bounds[i+2])
			bw.Flush()
		}()
	}
	format(w, bounds[0], bounds[1])
	wg.Wait()
	for i := range bufs {
		if panics[i] != nil {
			panic(panics[i]) // on the command's goroutine, where main reports it
		}
		w.Write(bufs[i].Bytes()) // an error stays in w for its Flush
	}
}

// splitByCost cuts items 0..n-1 into at most parts runs of about equal
// cost and returns their bounds: run j is bounds[j] to bounds[j+1]-1. A
// total cost below minParallelCost is one run.
func splitByCost(n int, cost func(i int) int, parts int) []int {
	total := 0
	for i := range n {
		total += cost(i)
	}
	if parts < 2 || total < minParallelCost {
		return []int{0, n}
	}
	bounds := []int{0}
	sum := 0
	for i := range n {
		sum += cost(i)
		if next := len(bounds); next < parts && sum*parts >= total*next {
			bounds = append(bounds, i+1)
		}
	}
	if bounds[len(bounds)-1] != n {
		bounds = append(bounds, n)
	}
	return bounds
}
