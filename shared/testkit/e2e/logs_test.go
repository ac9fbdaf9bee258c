package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
)

// saveLogs writes every line the stack's functions logged between from
// and to into dir/name.jsonl, for bench/cost to price (BENCHMARKS.md):
// each invocation's "aws usage" record, the EMF metrics, the rest. It
// does nothing unless CRAWLER_E2E_LOGS names the directory.
//
// The functions log to /aws/lambda/STACK/FUNCTION (template.yaml's
// LoggingConfig); an emulator that ignores LoggingConfig uses Lambda's
// default /aws/lambda/FUNCTION-NAME, which starts with the stack's name
// too. Lines found in both are kept once.
func (s *deployed) saveLogs(t *testing.T, name string, from, to time.Time) {
	dir := os.Getenv("CRAWLER_E2E_LOGS")
	if dir == "" {
		return
	}
	ctx := context.Background()
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cwl := cloudwatchlogs.NewFromConfig(cfg)
	groups, err := cwl.DescribeLogGroups(ctx, &cloudwatchlogs.DescribeLogGroupsInput{LogGroupNamePrefix: aws.String("/aws/lambda/" + s.Name)})
	if err != nil {
		t.Fatalf("log groups of %s: %v", s.Name, err)
	}
	seen := map[string]bool{}
	var lines []string
	for _, g := range groups.LogGroups {
		p := cloudwatchlogs.NewFilterLogEventsPaginator(cwl, &cloudwatchlogs.FilterLogEventsInput{
			LogGroupName: g.LogGroupName, StartTime: aws.Int64(from.UnixMilli()), EndTime: aws.Int64(to.UnixMilli()),
		})
		for p.HasMorePages() {
			page, err := p.NextPage(ctx)
			if err != nil {
				t.Fatalf("log events of %s: %v", aws.ToString(g.LogGroupName), err)
			}
			for _, e := range page.Events {
				for _, l := range strings.Split(strings.TrimSpace(aws.ToString(e.Message)), "\n") {
					if l = strings.TrimSpace(l); l != "" && !seen[l] {
						seen[l] = true
						lines = append(lines, l)
					}
				}
			}
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name+".jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d log lines from %d log groups in %s", len(lines), len(groups.LogGroups), path)
}
