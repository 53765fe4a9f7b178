package main

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ibtool/ibtool/internal/simfabric"
)

var attachedRE = regexp.MustCompile(`(?m)^Client \d+: pid (\d+) `)

// TestSIGINTAnywhereLeavesNothingBehind interrupts a discovery that writes
// a cache, 200 times, at random points of its life: before its CONNECT,
// during it (some runs meet a paused simulator), mid-walk and during the
// cache write. Afterwards ibsim's client table holds only OpenSM, no
// temporary file is left, and a cache, where there is one, is whole.
func TestSIGINTAnywhereLeavesNothingBehind(t *testing.T) {
	f := simfabric.StartT(t, "fattree-50.net")
	bin := buildIbtool(t)
	dir := t.TempDir()
	run := func(cache string, delay time.Duration) (int, error) {
		cmd := exec.Command(bin, "ibnetdiscover", "--cache", cache)
		cmd.Env = f.Env("")
		var stderr strings.Builder
		cmd.Stdout, cmd.Stderr = nil, &stderr
		if err := cmd.Start(); err != nil {
			return 0, err
		}
		if delay >= 0 {
			time.Sleep(delay)
			cmd.Process.Signal(os.Interrupt)
		}
		err := cmd.Wait()
		if err != nil && !strings.Contains(err.Error(), "exit status 130") && !strings.Contains(err.Error(), "signal") {
			err = fmt.Errorf("%w: %s", err, stderr.String())
		}
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			if ws := ee.Sys().(syscall.WaitStatus); ws.Signaled() {
				return 128 + int(ws.Signal()), nil // before main installed its handler
			}
			if ee.ExitCode() != 130 {
				return ee.ExitCode(), err
			}
			return 130, nil
		}
		return 0, err
	}
	// Whole runs, as many at once as the test runs: the reference cache,
	// and how long a run lives.
	const iterations, workers = 200, 3 // 3 runs, their helpers and OpenSM fit in 10 slots
	const pausedRuns = 5
	var life time.Duration
	var lifeMu sync.Mutex
	var refs sync.WaitGroup
	for w := 0; w < workers; w++ {
		refs.Add(1)
		go func(w int) {
			defer refs.Done()
			start := time.Now()
			if code, err := run(filepath.Join(dir, "ref"+strconv.Itoa(w)+".cache"), -1); code != 0 || err != nil {
				t.Errorf("reference run: exit %d, %v", code, err)
			}
			lifeMu.Lock()
			life = max(life, time.Since(start))
			lifeMu.Unlock()
		}(w)
	}
	refs.Wait()
	want, err := os.ReadFile(filepath.Join(dir, "ref0.cache"))
	if err != nil {
		t.Fatal(err)
	}

	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	delays := make([]time.Duration, iterations)
	for i := range delays {
		if i%2 == 0 { // anywhere in its life
			delays[i] = time.Duration(rng.Int63n(int64(life * 11 / 10)))
		} else { // its last fifth: the end of the walk and the cache write
			delays[i] = life*7/10 + time.Duration(rng.Int63n(int64(life*5/10)))
		}
	}
	var mu sync.Mutex
	codes := map[int]int{}
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			cache := filepath.Join(dir, "w"+strconv.Itoa(w)+".cache")
			for i := range next {
				os.Remove(cache)
				code, err := run(cache, delays[i])
				mu.Lock()
				codes[code]++
				mu.Unlock()
				if err != nil || (code != 0 && code != 130) {
					t.Errorf("run %d (SIGINT after %v): exit %d, %v", i, delays[i], code, err)
				}
				if got, err := os.ReadFile(cache); err == nil && !bytes.Equal(got, want) {
					t.Errorf("run %d (SIGINT after %v): partial cache of %d bytes", i, delays[i], len(got))
				}
			}
		}(w)
	}
	for i := 0; i < iterations-pausedRuns; i++ {
		next <- i
	}
	close(next)
	wg.Wait()

	// A paused simulator: the SIGINT falls during the CONNECT. One run at
	// a time: every run given up on leaves a helper holding its pending
	// CONNECT until ibsim wakes, and a second of the concurrent runs above
	// would leave more of them than ibsim's 10 slots.
	_, osm := f.Pids()
	cache := filepath.Join(dir, "paused.cache")
	for i := iterations - pausedRuns; i < iterations; i++ {
		paused := make(chan struct{})
		go func() { defer close(paused); f.Console("Wait 1") }()
		time.Sleep(50 * time.Millisecond)
		delay := time.Duration(rng.Int63n(int64(500 * time.Millisecond)))
		code, err := run(cache, delay)
		codes[code]++
		if err != nil || (code != 0 && code != 130) {
			t.Errorf("run %d (SIGINT after %v, simulator paused): exit %d, %v", i, delay, code, err)
		}
		<-paused
		onlyOpenSM(t, f, osm)
	}
	t.Logf("life of a run %v; exit codes %v", life, codes)

	if left, _ := filepath.Glob(filepath.Join(dir, ".*")); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
	onlyOpenSM(t, f, osm)
}

// onlyOpenSM waits until ibsim's client table holds OpenSM (pid osm)
// alone: a helper may still be finishing a CONNECT given up on.
func onlyOpenSM(t *testing.T, f *simfabric.Fabric, osm int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		out, err := f.Console("Attached")
		if err != nil {
			t.Fatalf("ibsim: %v", err)
		}
		m := attachedRE.FindAllStringSubmatch(out, -1)
		if len(m) == 1 && m[0][1] == strconv.Itoa(osm) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("client table after the runs: want only OpenSM (pid %d), got %q", osm, strings.TrimSpace(out))
		}
		time.Sleep(100 * time.Millisecond)
	}
}
