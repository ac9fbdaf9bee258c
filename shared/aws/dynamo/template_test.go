package dynamo

import (
	"fmt"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"gopkg.in/yaml.v3"
)

// The template and the code must not drift: these tests read
// template.yaml and check it against Schema() and the rules the
// functions rely on (see docs: SQS event sources, dead-letter queues).

// templateTables maps the tables to their logical IDs in template.yaml.
var templateTables = Tables{
	Candidates:  "CandidatesTable",
	CrawlLog:    "CrawlLogTable",
	Generations: "GenerationsTable",
	Control:     "ControlTable",
}

// template is template.yaml as plain values: maps, lists and strings
// (numbers too stay strings). CloudFormation's short tags become their
// long forms: !Ref X is {"Ref": "X"}, !GetAtt A.B is
// {"Fn::GetAtt": ["A", "B"]}, !Sub s is {"Fn::Sub": s}, and so on.
type template map[string]any

func loadTemplate(t *testing.T) template {
	t.Helper()
	b, err := os.ReadFile("../../../template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("template.yaml: %v", err)
	}
	m, ok := plain(&doc).(map[string]any)
	if !ok {
		t.Fatal("template.yaml is not a mapping")
	}
	return m
}

// plain converts a YAML node to plain values, intrinsic tags included.
func plain(n *yaml.Node) any {
	var v any
	switch n.Kind {
	case yaml.DocumentNode:
		return plain(n.Content[0])
	case yaml.AliasNode:
		return plain(n.Alias)
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			m[n.Content[i].Value] = plain(n.Content[i+1])
		}
		v = m
	case yaml.SequenceNode:
		l := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			l = append(l, plain(c))
		}
		v = l
	default:
		v = n.Value
	}
	if !strings.HasPrefix(n.Tag, "!") || strings.HasPrefix(n.Tag, "!!") {
		return v
	}
	fn := strings.TrimPrefix(n.Tag, "!")
	switch fn {
	case "Ref", "Condition":
		return map[string]any{fn: v}
	case "GetAtt":
		if s, ok := v.(string); ok {
			id, attr, _ := strings.Cut(s, ".")
			v = []any{id, attr}
		}
	}
	return map[string]any{"Fn::" + fn: v}
}

// path walks maps by key; nil when any step is missing.
func path(v any, keys ...string) any {
	if tp, ok := v.(template); ok {
		v = map[string]any(tp)
	}
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func list(v any) []any {
	l, _ := v.([]any)
	return l
}

// number reads a literal number.
func number(v any) (int, bool) {
	n, err := strconv.Atoi(str(v))
	return n, err == nil
}

// ref returns X for {"Ref": X}.
func ref(v any) string { return str(path(v, "Ref")) }

// getAttArn returns X for {"Fn::GetAtt": [X, "Arn"]}.
func getAttArn(v any) string {
	l := list(path(v, "Fn::GetAtt"))
	if len(l) != 2 || str(l[1]) != "Arn" {
		return ""
	}
	return str(l[0])
}

func (tp template) resources() map[string]any {
	m, _ := tp["Resources"].(map[string]any)
	return m
}

// ofType returns the logical IDs of the resources of a type, sorted.
func (tp template) ofType(typ string) []string {
	var ids []string
	for id, r := range tp.resources() {
		if str(path(r, "Type")) == typ {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// fnProp returns a function's property, or the Globals' when it has none.
func (tp template) fnProp(id, prop string) any {
	if v := path(tp.resources()[id], "Properties", prop); v != nil {
		return v
	}
	return path(tp, "Globals", "Function", prop)
}

func keySchema(v any) []string {
	var ks []string
	for _, e := range list(v) {
		ks = append(ks, str(path(e, "AttributeName"))+" "+str(path(e, "KeyType")))
	}
	return ks
}

func schemaKeys(ks []types.KeySchemaElement) []string {
	var out []string
	for _, k := range ks {
		out = append(out, aws.ToString(k.AttributeName)+" "+string(k.KeyType))
	}
	return out
}

func TestTemplateTablesMatchSchema(t *testing.T) {
	tp := loadTemplate(t)
	var want []string
	for _, in := range Schema(templateTables) {
		id := aws.ToString(in.TableName)
		want = append(want, id)
		t.Run(id, func(t *testing.T) {
			r := tp.resources()[id]
			if typ := str(path(r, "Type")); typ != "AWS::DynamoDB::Table" {
				t.Fatalf("template.yaml has no AWS::DynamoDB::Table %s (type %q)", id, typ)
			}
			p := path(r, "Properties")
			if got := str(path(p, "BillingMode")); got != string(in.BillingMode) {
				t.Errorf("BillingMode = %q, Schema says %q", got, in.BillingMode)
			}
			if got, w := keySchema(path(p, "KeySchema")), schemaKeys(in.KeySchema); !reflect.DeepEqual(got, w) {
				t.Errorf("KeySchema = %v, Schema says %v", got, w)
			}
			gotAttrs := map[string]string{}
			for _, a := range list(path(p, "AttributeDefinitions")) {
				gotAttrs[str(path(a, "AttributeName"))] = str(path(a, "AttributeType"))
			}
			wantAttrs := map[string]string{}
			for _, a := range in.AttributeDefinitions {
				wantAttrs[aws.ToString(a.AttributeName)] = string(a.AttributeType)
			}
			if !reflect.DeepEqual(gotAttrs, wantAttrs) || len(list(path(p, "AttributeDefinitions"))) != len(in.AttributeDefinitions) {
				t.Errorf("AttributeDefinitions = %v, Schema says %v", gotAttrs, wantAttrs)
			}
			gotGSIs := map[string]string{}
			for _, g := range list(path(p, "GlobalSecondaryIndexes")) {
				var attrs []string
				for _, a := range list(path(g, "Projection", "NonKeyAttributes")) {
					attrs = append(attrs, fmt.Sprint(a))
				}
				gotGSIs[str(path(g, "IndexName"))] = fmt.Sprint(keySchema(path(g, "KeySchema")), " ", str(path(g, "Projection", "ProjectionType")), " ", attrs)
			}
			wantGSIs := map[string]string{}
			for _, g := range in.GlobalSecondaryIndexes {
				wantGSIs[aws.ToString(g.IndexName)] = fmt.Sprint(schemaKeys(g.KeySchema), " ", g.Projection.ProjectionType, " ", g.Projection.NonKeyAttributes)
			}
			if !reflect.DeepEqual(gotGSIs, wantGSIs) {
				t.Errorf("GlobalSecondaryIndexes = %v, Schema says %v", gotGSIs, wantGSIs)
			}
			if lsi := path(p, "LocalSecondaryIndexes"); lsi != nil || len(in.LocalSecondaryIndexes) > 0 {
				t.Errorf("LocalSecondaryIndexes: template %v, Schema %v; neither should have any", lsi, in.LocalSecondaryIndexes)
			}
			// CreateTables turns TTL on for the crawl log only.
			ttl := path(p, "TimeToLiveSpecification")
			if id == templateTables.CrawlLog {
				if str(path(ttl, "AttributeName")) != TTLAttribute || str(path(ttl, "Enabled")) != "true" {
					t.Errorf("TimeToLiveSpecification = %v, want %s enabled", ttl, TTLAttribute)
				}
			} else if ttl != nil {
				t.Errorf("TimeToLiveSpecification = %v, but CreateTables sets none here", ttl)
			}
		})
	}
	slices.Sort(want)
	if got := tp.ofType("AWS::DynamoDB::Table"); !reflect.DeepEqual(got, want) {
		t.Errorf("template.yaml declares the tables %v, Schema() knows %v", got, want)
	}
}

func TestTemplateFunctions(t *testing.T) {
	tp := loadTemplate(t)
	fns := tp.ofType("AWS::Serverless::Function")
	if len(fns) == 0 {
		t.Fatal("template.yaml has no AWS::Serverless::Function")
	}
	makefile, err := os.ReadFile("../../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range fns {
		if got := str(tp.fnProp(id, "Runtime")); got != "provided.al2023" {
			t.Errorf("%s: Runtime = %q, want provided.al2023", id, got)
		}
		// Architectures is the Architecture parameter, arm64 unless a
		// deploy says otherwise (make e2e's emulator runs x86_64).
		if got := tp.fnProp(id, "Architectures"); !reflect.DeepEqual(got, []any{map[string]any{"Ref": "Architecture"}}) {
			t.Errorf("%s: Architectures = %v, want [!Ref Architecture]", id, got)
		}
		if def := str(path(tp["Parameters"], "Architecture", "Default")); def != "arm64" {
			t.Errorf("parameter Architecture defaults to %q, want arm64", def)
		}
		if got := str(tp.fnProp(id, "Handler")); got != "bootstrap" {
			t.Errorf("%s: Handler = %q, want bootstrap", id, got)
		}
		// SAM's makefile build method runs the target build-<LogicalId>.
		if str(path(tp.resources()[id], "Metadata", "BuildMethod")) != "makefile" {
			t.Errorf("%s: Metadata.BuildMethod is not makefile", id)
		} else if !regexp.MustCompile(`(?m)^build-` + id + `:`).Match(makefile) {
			t.Errorf("%s: the Makefile has no target build-%s", id, id)
		}
	}
}

// TestTemplateQueues checks every SQS event source and the queue behind
// it: partial batch responses, a concurrency cap, a dead-letter queue
// after at least 5 receives (sqsbatch dead-letters at MaxReceives, 5 by
// default, and SQS's redrive is the backstop), a visibility timeout of at
// least 6 times the function's timeout (AWS's advice for Lambda), and the
// function told its dead-letter queue.
func TestTemplateQueues(t *testing.T) {
	tp := loadTemplate(t)
	res := tp.resources()
	consumed := map[string]string{} // queue -> function
	for _, fn := range tp.ofType("AWS::Serverless::Function") {
		events, _ := path(res[fn], "Properties", "Events").(map[string]any)
		for name, ev := range events {
			if str(path(ev, "Type")) != "SQS" {
				continue
			}
			where := fn + "." + name
			p := path(ev, "Properties")
			if !slices.Contains(list(path(p, "FunctionResponseTypes")), any("ReportBatchItemFailures")) {
				t.Errorf("%s: FunctionResponseTypes lacks ReportBatchItemFailures", where)
			}
			checkConcurrency(t, tp, where, path(p, "ScalingConfig", "MaximumConcurrency"))
			if n, ok := number(path(p, "BatchSize")); ok && n > 10 && path(p, "MaximumBatchingWindowInSeconds") == nil {
				t.Errorf("%s: BatchSize %d needs a MaximumBatchingWindowInSeconds", where, n)
			}

			q := getAttArn(path(p, "Queue"))
			if str(path(res[q], "Type")) != "AWS::SQS::Queue" {
				t.Errorf("%s: Queue is not !GetAtt <an AWS::SQS::Queue>.Arn: %v", where, path(p, "Queue"))
				continue
			}
			if other, ok := consumed[q]; ok {
				t.Errorf("%s: %s is consumed by %s as well", where, q, other)
			}
			consumed[q] = fn
			qp := path(res[q], "Properties")

			timeout, ok := number(tp.fnProp(fn, "Timeout"))
			if !ok {
				t.Errorf("%s: Timeout is not a literal number: %v", fn, tp.fnProp(fn, "Timeout"))
			}
			vis, ok := number(path(qp, "VisibilityTimeout"))
			if !ok {
				vis = 30 // SQS's default
			}
			// AWS's rule: six times the function's timeout, plus the
			// batching window.
			window, _ := number(path(p, "MaximumBatchingWindowInSeconds"))
			if vis < 6*timeout+window {
				t.Errorf("%s: VisibilityTimeout %d < 6 x %s's Timeout %d + MaximumBatchingWindowInSeconds %d", q, vis, fn, timeout, window)
			}

			rp := path(qp, "RedrivePolicy")
			if n, ok := number(path(rp, "maxReceiveCount")); !ok || n < 5 {
				t.Errorf("%s: RedrivePolicy.maxReceiveCount = %v, want >= 5", q, path(rp, "maxReceiveCount"))
			}
			dlq := getAttArn(path(rp, "deadLetterTargetArn"))
			if str(path(res[dlq], "Type")) != "AWS::SQS::Queue" {
				t.Errorf("%s: RedrivePolicy.deadLetterTargetArn is not !GetAtt <an AWS::SQS::Queue>.Arn: %v", q, path(rp, "deadLetterTargetArn"))
				continue
			}
			// A redriven message keeps its first enqueue time: a DLQ that
			// keeps messages no longer than its source can lose them at once.
			keep, ok := number(path(qp, "MessageRetentionPeriod"))
			if !ok {
				keep = 345600 // SQS's default, 4 days
			}
			if dkeep, _ := number(path(res[dlq], "Properties", "MessageRetentionPeriod")); dkeep <= keep {
				t.Errorf("%s: MessageRetentionPeriod %d is not longer than %s's %d", dlq, dkeep, q, keep)
			}
			if got := ref(path(res[fn], "Properties", "Environment", "Variables", "DEAD_LETTER_QUEUE_URL")); got != dlq {
				t.Errorf("%s: DEAD_LETTER_QUEUE_URL = !Ref %q, want !Ref %s (the DLQ of %s)", fn, got, dlq, q)
			}
		}
	}
	if len(consumed) == 0 {
		t.Fatal("no function has an SQS event")
	}
	// Every queue with a redrive policy is a work queue: someone must
	// consume it.
	for _, q := range tp.ofType("AWS::SQS::Queue") {
		if path(res[q], "Properties", "RedrivePolicy") != nil && consumed[q] == "" {
			t.Errorf("%s has a dead-letter queue but no function consumes it", q)
		}
	}
}

// checkConcurrency wants a MaximumConcurrency Lambda accepts (2 to 1000),
// literal or a parameter bounded to that range.
func checkConcurrency(t *testing.T, tp template, where string, v any) {
	t.Helper()
	if v == nil {
		t.Errorf("%s: no ScalingConfig.MaximumConcurrency", where)
		return
	}
	if p := ref(v); p != "" {
		param := path(tp, "Parameters", p)
		lo, okLo := number(path(param, "MinValue"))
		hi, okHi := number(path(param, "MaxValue"))
		def, okDef := number(path(param, "Default"))
		if param == nil || !okLo || !okHi || !okDef || lo < 2 || hi > 1000 || def < lo || def > hi {
			t.Errorf("%s: MaximumConcurrency !Ref %s needs a Number parameter with MinValue >= 2, MaxValue <= 1000 and a Default between", where, p)
		}
		return
	}
	if n, ok := number(v); !ok || n < 2 || n > 1000 {
		t.Errorf("%s: MaximumConcurrency = %v, want 2 to 1000", where, v)
	}
}
