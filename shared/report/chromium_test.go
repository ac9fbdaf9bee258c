package report

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/serverless-crawler/crawler/shared/crawl"
)

// sampleReport is a report of a made-up crawl with a bit of everything.
func sampleReport() crawl.CrawlReport {
	b := crawl.NewReportBuilder()
	start := int64(1_764_000_000)
	for i := range 300 {
		exit := crawl.ExitComplete
		switch {
		case i%17 == 0:
			exit = crawl.ExitHTTPClientError
		case i%29 == 0:
			exit = crawl.ExitRobotsDisallowed
		}
		size := int64(500 * (i%40 + 1) * (i%7 + 1))
		b.AddCrawl(crawl.CrawlLog{URL: fmt.Sprintf("https://host%d.example/p%d", i%4, i), TimeStarted: start + int64(i/3),
			TimeTakenMS: int64(i % 97), ExitCode: exit}, &size)
		b.AddCandidate(crawl.Candidate{Hops: i % 13})
	}
	return b.Report(4, time.Unix(start+200, 0))
}

// TestReportInChromium renders a report in headless Chromium (Debian's
// package; CI installs it): the page must draw its charts, with bars,
// and log no error to the console.
func TestReportInChromium(t *testing.T) {
	bin, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("chromium is not installed; .ci/run installs Debian's package")
		}
		t.Skip("chromium is not installed (apt-get install chromium)")
	}
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	var buf bytes.Buffer
	if err := WriteHTML(&buf, sampleReport(), "Crawl report: test"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(page, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), bin, "--headless", "--no-sandbox", "--disable-gpu", "--user-data-dir="+filepath.Join(dir, "profile"),
		"--enable-logging=stderr", "--v=0", "--dump-dom", "file://"+page)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, stderr.String())
	}
	dom := stdout.String()
	charts := strings.Count(dom, `<svg class="chart"`)
	bars := regexp.MustCompile(`<rect class="[a-z]+" x="\d+" y="\d+" width="\d+" height="[1-9]\d*"`).FindAllString(dom, -1)
	if charts < 5 || len(bars) < 20 {
		t.Errorf("the page as Chromium rendered it has %d charts and %d bars; want the 5 charts, with their bars", charts, len(bars))
	}
	for _, l := range strings.Split(stderr.String(), "\n") {
		if strings.Contains(l, "CONSOLE") || strings.Contains(l, "Uncaught") {
			t.Errorf("console: %s", l)
		}
	}
	for _, want := range []string{"300", "host0.example", "http-client-error", "robots-disallowed", "10+"} {
		if !strings.Contains(dom, want) {
			t.Errorf("the page does not show %q", want)
		}
	}
}
