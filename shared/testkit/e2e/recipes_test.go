package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/serverless-crawler/crawler/shared/web/urlnorm"
)

// checkRecipes runs the README's AWS CLI recipes (events/aws-cli.sh)
// with AWS CLI v1 from infra/pytools.sh against the deployed stack: a
// bare URL and an event file sent to the enqueue queue are both crawled
// (v1 would have sent the page at a bare URL had the recipe passed it on
// the command line), a function's log lines read without `logs tail`,
// and the stack's alarms listed.
func (s *deployed) checkRecipes(t *testing.T, bare, event string) {
	bin := os.Getenv("CRAWLER_TEST_PYTOOLS")
	if bin == "" {
		t.Skip("CRAWLER_TEST_PYTOOLS is not set (infra/e2e.sh sets it from infra/pytools.sh, which installs AWS CLI v1)")
	}
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("../../../events/aws-cli.sh", args...)
		// v1 reads neither AWS_REGION nor AWS_ENDPOINT_URL itself; the
		// recipe passes them on.
		cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("aws-cli.sh %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	version, err := exec.Command(filepath.Join(bin, "aws"), "--version").CombinedOutput()
	if err != nil || !strings.HasPrefix(string(version), "aws-cli/1.") {
		t.Fatalf("aws --version: %q, %v; want AWS CLI v1", version, err)
	}
	ev := filepath.Join(t.TempDir(), "event.json")
	if err := os.WriteFile(ev, []byte(fmt.Sprintf(`{"v":1,"url":%q,"priority":5}`, event)), 0o644); err != nil {
		t.Fatal(err)
	}
	run("enqueue", s.Name, bare, ev)

	ctx := context.Background()
	for _, raw := range []string{bare, event} {
		n, err := urlnorm.Normalize(raw)
		if err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(2 * time.Minute)
		for {
			c, err := s.db.GetCandidate(ctx, n.URL)
			if err == nil && c.LastCrawlTime != nil && c.LastCrawlExitCode != nil {
				t.Logf("%s sent with AWS CLI v1: crawled, %s", raw, *c.LastCrawlExitCode)
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s sent with AWS CLI v1 was not crawled within 2 minutes (%+v, %v)", raw, c, err)
			}
			time.Sleep(2 * time.Second)
		}
	}

	if logs := run("logs", s.Name, "fetcher", "60"); !strings.Contains(logs, "aws usage") {
		t.Errorf("the logs recipe printed no fetcher log lines:\n%.500s", logs)
	}
	alarms := run("alarms", s.Name)
	for _, a := range []string{"enqueue-dead-letters", "fetch-dead-letters", "parse-dead-letters", "summarize-dead-letters", "failed-crawls"} {
		if !strings.Contains(alarms, s.Name+"-"+a) {
			t.Errorf("alarm %s-%s is not listed:\n%s", s.Name, a, alarms)
		}
	}
}
