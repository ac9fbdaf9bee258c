package handlers

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/serverless-crawler/crawler/shared/aws/emf"
	"github.com/serverless-crawler/crawler/shared/aws/sqsbatch"
	"github.com/serverless-crawler/crawler/shared/crawl"
)

// templateResources reads template.yaml's resources as plain values
// (short-form tags such as !Sub are kept as their scalar or sequence).
func templateResources(t testing.TB) map[string]map[string]any {
	t.Helper()
	b, err := os.ReadFile("../../../template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Resources map[string]map[string]any `yaml:"Resources"`
	}
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("template.yaml: %v", err)
	}
	return doc.Resources
}

// emittedMetrics are the EMF metric names a fetcher writes for crawls and
// messages, found by recording them, plus the scheduler's.
func emittedMetrics(t *testing.T) map[string]bool {
	var buf bytes.Buffer
	m := emf.New(&buf, "fetcher")
	size, ms := int64(10), int64(5)
	RecordCrawlMetrics(m, crawl.Crawl{Log: crawl.CrawlLog{ExitCode: crawl.ExitHTTPServerError},
		File: &crawl.File{FileSize: &size}, Requests: []crawl.Request{{DurationMS: &ms}}})
	NewStage(func(context.Context, crawl.FetchTask) error { return nil }, sqsbatch.Processor{}, m).Batch.OnOutcome("ok")
	if err := m.Flush(); err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{"Admissions": true} // the scheduler's (scheduler.go)
	sc := bufio.NewScanner(&buf)
	for sc.Scan() {
		var rec struct {
			AWS struct {
				CloudWatchMetrics []struct{ Metrics []struct{ Name string } }
			} `json:"_aws"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatal(err)
		}
		for _, cm := range rec.AWS.CloudWatchMetrics {
			for _, n := range cm.Metrics {
				names[n.Name] = true
			}
		}
	}
	return names
}

// TestDashboardAndAlarms: the dashboard's body is JSON once CloudFormation
// has substituted it; every crawler metric it shows is one the functions
// write; every dead-letter queue has an alarm on the alarm topic; and the
// alarm widget shows every alarm.
func TestDashboardAndAlarms(t *testing.T) {
	res := templateResources(t)
	emitted := emittedMetrics(t)
	for _, n := range []string{"Pages", "Failed", "Bytes", "FetchLatency", "Messages"} {
		if !emitted[n] {
			t.Errorf("the functions do not write %s", n)
		}
	}

	body, ok := res["Dashboard"]["Properties"].(map[string]any)["DashboardBody"].(string)
	if !ok {
		t.Fatalf("Dashboard has no DashboardBody string: %#v", res["Dashboard"])
	}
	// CloudFormation's substitution: ${AlarmFailedShare} is a number, the
	// rest are names and ARNs.
	sub := regexp.MustCompile(`\$\{([^}]+)\}`)
	refs := map[string]bool{}
	jsonBody := sub.ReplaceAllStringFunc(body, func(m string) string {
		name := m[2 : len(m)-1]
		refs[strings.Split(name, ".")[0]] = true
		if name == "AlarmFailedShare" {
			return "0.5"
		}
		return "sub-" + strings.ReplaceAll(name, ".", "-")
	})
	var dash struct {
		Widgets []struct {
			Type       string
			Properties struct {
				Title   string
				Metrics [][]any
				Alarms  []string
			}
		}
	}
	if err := json.Unmarshal([]byte(jsonBody), &dash); err != nil {
		t.Fatalf("dashboard body is not JSON: %v\n%s", err, jsonBody)
	}
	for r := range refs {
		if _, ok := res[r]; !ok && !strings.HasPrefix(r, "AWS::") && r != "AlarmFailedShare" {
			t.Errorf("dashboard refers to %s, which is not a resource", r)
		}
	}
	search := regexp.MustCompile(`MetricName="([A-Za-z]+)"`)
	var shown, alarmsShown []string
	for _, w := range dash.Widgets {
		if w.Properties.Title == "" {
			t.Errorf("a %s widget has no title", w.Type)
		}
		alarmsShown = append(alarmsShown, w.Properties.Alarms...)
		for _, row := range w.Properties.Metrics {
			if ns, _ := row[0].(string); ns == emf.Namespace {
				shown = append(shown, row[1].(string))
			}
			if e, ok := row[0].(map[string]any); ok {
				for _, m := range search.FindAllStringSubmatch(e["expression"].(string), -1) {
					shown = append(shown, m[1])
				}
			}
		}
	}
	for _, n := range shown {
		if !emitted[n] {
			t.Errorf("the dashboard shows %s.%s, which no function writes", emf.Namespace, n)
		}
	}

	var alarms []string
	for id, r := range res {
		if r["Type"] == "AWS::CloudWatch::Alarm" {
			alarms = append(alarms, id)
			p := r["Properties"].(map[string]any)
			if acts, _ := p["AlarmActions"].([]any); len(acts) != 1 {
				t.Errorf("%s does not notify the alarm topic: %v", id, p["AlarmActions"])
			}
			if p["Namespace"] == emf.Namespace && !emitted[p["MetricName"].(string)] {
				t.Errorf("%s watches %s, which no function writes", id, p["MetricName"])
			}
			if !slices.Contains(alarmsShown, "sub-"+id+"-Arn") {
				t.Errorf("%s is not on the dashboard's alarm widget", id)
			}
		}
	}
	for id, r := range res {
		if r["Type"] == "AWS::SQS::Queue" && strings.HasSuffix(id, "DeadLetterQueue") {
			want := strings.TrimSuffix(id, "DeadLetterQueue") + "DeadLettersAlarm"
			if !slices.Contains(alarms, want) {
				t.Errorf("dead-letter queue %s has no alarm %s", id, want)
			}
		}
	}
}
