package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/serverless-crawler/crawler/shared/testkit/testsite"
)

// TestCPUProfileFlag checks the hidden --cpuprofile flag: left out of
// the usage text, and writing a profile of the crawl.
func TestCPUProfileFlag(t *testing.T) {
	_, stderr, code := runCLI(t, "crawl", "-h")
	if code != 0 {
		t.Fatalf("crawl -h exit %d", code)
	}
	if !strings.Contains(stderr, "-concurrency") || strings.Contains(stderr, cpuProfileFlag) {
		t.Errorf("usage should list the flags but not --%s:\n%s", cpuProfileFlag, stderr)
	}

	site := testsite.New()
	defer site.Close()
	site.SetHang(0)
	prof := filepath.Join(t.TempDir(), "cpu.prof")
	_, stderr, code = runCLI(t, "crawl", "--data", t.TempDir(), "--max-depth", "1", "--delay", "0", "--quiet",
		"--cpuprofile", prof, site.URL+"/")
	if code != 0 {
		t.Fatalf("crawl exit %d: %s", code, stderr)
	}
	if fi, err := os.Stat(prof); err != nil || fi.Size() == 0 {
		t.Errorf("no CPU profile written: %v", err)
	}

	_, stderr, code = runCLI(t, "crawl", "--data", t.TempDir(), "--cpuprofile", filepath.Join(t.TempDir(), "no", "such", "dir", "p"), site.URL+"/")
	if code != exitUsage || !strings.Contains(stderr, cpuProfileFlag) {
		t.Errorf("an unwritable profile path: exit %d, %q; want %d naming the flag", code, stderr, exitUsage)
	}
}

// TestHeapProfileFlag checks the hidden --heapprofile flag: left out of
// the usage text, and writing a heap profile of the crawl's peak.
func TestHeapProfileFlag(t *testing.T) {
	_, stderr, _ := runCLI(t, "crawl", "-h")
	if strings.Contains(stderr, heapProfileFlag) {
		t.Errorf("usage lists the hidden --%s:\n%s", heapProfileFlag, stderr)
	}
	site := testsite.New()
	defer site.Close()
	site.SetHang(0)
	prof := filepath.Join(t.TempDir(), "heap.prof")
	_, stderr, code := runCLI(t, "crawl", "--data", t.TempDir(), "--max-depth", "1", "--delay", "0", "--quiet",
		"--heapprofile", prof, site.URL+"/")
	if code != 0 {
		t.Fatalf("crawl exit %d: %s", code, stderr)
	}
	if fi, err := os.Stat(prof); err != nil || fi.Size() == 0 {
		t.Errorf("no heap profile written: %v", err)
	}
	_, stderr, code = runCLI(t, "crawl", "--data", t.TempDir(), "--heapprofile", filepath.Join(t.TempDir(), "no", "such", "dir", "p"), site.URL+"/")
	if code != exitUsage || !strings.Contains(stderr, heapProfileFlag) {
		t.Errorf("an unwritable profile path: exit %d, %q; want %d naming the flag", code, stderr, exitUsage)
	}
}
