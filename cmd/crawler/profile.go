package main

import (
	"cmp"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"time"
)

// cpuProfileFlag is the hidden --cpuprofile flag of `crawler crawl`: a
// CPU profile of the whole run, for bench/ (go tool pprof FILE). It is
// left out of the usage text.
const cpuProfileFlag = "cpuprofile"

// heapProfileFlag is the hidden --heapprofile flag: a heap profile taken
// at the heap's peak (go tool pprof -sample_index=inuse_space FILE), for
// bench/bodies.sh and anyone asking where a crawl's memory goes.
const heapProfileFlag = "heapprofile"

// traceFlag is the hidden --trace flag: an execution trace of the whole
// run (go tool trace FILE), which shows what each goroutine waited on:
// how BENCHMARKS.md found the SQLite writer to be the crawl's critical
// path. A diagnostic, not for timed runs: tracing costs some CPU.
const traceFlag = "trace"

// hidden are the flags left out of the usage text.
var hidden = map[string]bool{cpuProfileFlag: true, heapProfileFlag: true, traceFlag: true}

// startTrace starts an execution trace written to path (none if path is
// empty) and returns the function that stops it and closes the file.
func startTrace(path string) (stop func() error, err error) {
	return startToFile(path, traceFlag, "execution trace", trace.Start, trace.Stop)
}

// startToFile starts a diagnostic of the whole run, named what and
// given by the flag, written to path (none if path is empty): start
// begins it on the file and end ends it. It returns the function that
// ends it and closes the file.
func startToFile(path, flag, what string, start func(io.Writer) error, end func()) (stop func() error, err error) {
	if path == "" {
		return func() error { return nil }, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, usagef("--%s: %v", flag, err)
	}
	if err := start(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("start %s: %w", what, err)
	}
	return func() error {
		end()
		return f.Close()
	}, nil
}

// startCPUProfile starts a CPU profile written to path (none if path is
// empty) and returns the function that stops it and closes the file.
func startCPUProfile(path string) (stop func() error, err error) {
	return startToFile(path, cpuProfileFlag, "CPU profile", pprof.StartCPUProfile, pprof.StopCPUProfile)
}

// peakEvery is how often the heap profiler looks at the heap.
const peakEvery = 50 * time.Millisecond

// startHeapProfile writes a heap profile to path (none if path is empty)
// each time the heap in use passes a tenth above its largest yet, so
// that the file last written shows the peak (a run too short to be
// looked at gets its profile at the end); the function it returns stops
// it. Reading the heap's size stops the world briefly, every
// peakEvery: a diagnostic, not for timed runs.
func startHeapProfile(path string) (stop func() error, err error) {
	if path == "" {
		return func() error { return nil }, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, usagef("--%s: %v", heapProfileFlag, err)
	}
	f.Close()
	runtime.MemProfileRate = 64 << 10
	done, exited := make(chan struct{}), make(chan error, 1)
	go func() {
		var most uint64
		var werr error
		tick := time.NewTicker(peakEvery)
		defer tick.Stop()
		for {
			select {
			case <-done:
				if most == 0 { // a run shorter than one look: its end
					werr = writeHeapProfile(path)
				}
				exited <- werr
				return
			case <-tick.C:
			}
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			if m.HeapInuse > most+most/10 {
				most = m.HeapInuse
				werr = cmp.Or(writeHeapProfile(path), werr)
			}
		}
	}()
	return func() error { close(done); return <-exited }, nil
}

func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
