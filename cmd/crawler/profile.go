package main

import (
	"fmt"
	"os"
	"runtime/pprof"
)

// cpuProfileFlag is the hidden --cpuprofile flag of `crawler crawl`: a
// CPU profile of the whole run, for bench/ (go tool pprof FILE). It is
// left out of the usage text.
const cpuProfileFlag = "cpuprofile"

// startCPUProfile starts a CPU profile written to path (none if path is
// empty) and returns the function that stops it and closes the file.
func startCPUProfile(path string) (stop func() error, err error) {
	if path == "" {
		return func() error { return nil }, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, usagef("--%s: %v", cpuProfileFlag, err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("start CPU profile: %w", err)
	}
	return func() error {
		pprof.StopCPUProfile()
		return f.Close()
	}, nil
}
