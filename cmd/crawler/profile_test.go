package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/serverless-crawler/crawler/shared/testkit/testsite"
)

// TestProfileFlags checks the hidden profile and trace flags: left out of the
// usage text, each writes its profile of a crawl, and an unwritable path
// is a usage error naming the flag.
func TestProfileFlags(t *testing.T) {
	_, stderr, code := runCLI(t, "crawl", "-h")
	if code != 0 || !strings.Contains(stderr, "--concurrency") {
		t.Fatalf("crawl -h exit %d:\n%s", code, stderr)
	}
	site := testsite.New()
	defer site.Close()
	site.SetHang(0)
	for _, flag := range []string{cpuProfileFlag, heapProfileFlag, traceFlag} {
		t.Run(flag, func(t *testing.T) {
			if strings.Contains(stderr, flag) {
				t.Errorf("usage lists the hidden --%s", flag)
			}
			prof := filepath.Join(t.TempDir(), flag+".prof")
			_, errOut, code := runCLI(t, "crawl", "--data", t.TempDir(), "--max-depth", "1", "--delay", "0", "--quiet",
				"--"+flag, prof, site.URL+"/")
			if code != 0 {
				t.Fatalf("crawl exit %d: %s", code, errOut)
			}
			if fi, err := os.Stat(prof); err != nil || fi.Size() == 0 {
				t.Errorf("no profile written: %v", err)
			}
			_, errOut, code = runCLI(t, "crawl", "--data", t.TempDir(), "--"+flag, filepath.Join(t.TempDir(), "no", "such", "dir", "p"), site.URL+"/")
			if code != exitUsage || !strings.Contains(errOut, flag) {
				t.Errorf("an unwritable profile path: exit %d, %q; want %d naming the flag", code, errOut, exitUsage)
			}
		})
	}
}
