// The import rules that keep the layout of shared/ honest (docs/design.md,
// "Where things live"). They read the real import graph with go list.
package shared_test

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/serverless-crawler/crawler/"

// runners wire stages to a home's adapters: the one-machine pipeline and
// each Lambda function's builder. No other adapter may import a stage.
var runners = []string{"shared/local/pipeline", "shared/aws/handlers/"}

// functionStage is the one stage each function links.
var functionStage = map[string]string{
	"functions/scheduler":  "shared/stage/schedule",
	"functions/fetcher":    "shared/stage/fetch",
	"functions/parser":     "shared/stage/parse",
	"functions/summarizer": "shared/stage/summarize",
}

// role is the folder that gives a package its role: crawl, web, stage,
// aws, local or testkit (or cmd, functions, bench outside shared/).
func role(pkg string) string {
	p := strings.TrimPrefix(pkg, "shared/")
	if p == pkg {
		return strings.SplitN(pkg, "/", 2)[0]
	}
	return strings.SplitN(p, "/", 2)[0]
}

func isRunner(pkg string) bool {
	for _, r := range runners {
		if pkg == r || strings.HasSuffix(r, "/") && strings.HasPrefix(pkg, r) {
			return true
		}
	}
	return false
}

// violations lists the imports (package -> ours it imports, module
// prefix cut) that break the rules:
//   - crawl imports nothing of ours; web imports only crawl and web;
//   - a stage imports only crawl and web (no adapter, no other stage);
//   - an adapter (aws, local) never imports a stage, runners excepted,
//     and neither home imports the other;
//   - only tests, the CLI and other kits import testkit.
func violations(imports map[string][]string) []string {
	var out []string
	bad := func(from, to, why string) { out = append(out, fmt.Sprintf("%s imports %s: %s", from, to, why)) }
	for from, tos := range imports {
		rf := role(from)
		for _, to := range tos {
			rt := role(to)
			switch {
			case rf == "crawl":
				bad(from, to, "the domain imports nothing else of ours")
			case rf == "web" && rt != "crawl" && rt != "web":
				bad(from, to, "web protocols import only crawl and web")
			case rf == "stage" && rt != "crawl" && rt != "web":
				bad(from, to, "a stage imports only crawl and web (no adapter, no other stage)")
			case (rf == "aws" || rf == "local") && rt == "stage" && !isRunner(from):
				bad(from, to, "an adapter never imports a stage (only runners wire stages)")
			case rf == "aws" && rt == "local", rf == "local" && rt == "aws":
				bad(from, to, "the two homes do not import each other")
			case rt == "testkit" && rf != "testkit" && rf != "cmd":
				bad(from, to, "only tests, the CLI and kits import testkit")
			}
		}
	}
	sort.Strings(out)
	return out
}

// goList runs go list in the module's root and returns, per package of
// ours, the packages of ours in field (Imports or Deps).
func goList(t *testing.T, field string, patterns ...string) map[string][]string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	args := append([]string{"list", "-f", "{{.ImportPath}} {{join ." + field + " \" \"}}"}, patterns...)
	cmd := exec.Command("go", args...)
	cmd.Dir = root
	b, err := cmd.Output()
	if err != nil {
		t.Fatalf("go %s: %v", strings.Join(args, " "), err)
	}
	graph := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || !strings.HasPrefix(f[0], module) {
			continue
		}
		from := strings.TrimPrefix(f[0], module)
		graph[from] = nil
		for _, to := range f[1:] {
			if strings.HasPrefix(to, module) {
				graph[from] = append(graph[from], strings.TrimPrefix(to, module))
			}
		}
	}
	return graph
}

func TestImportDirection(t *testing.T) {
	graph := goList(t, "Imports", "./...")
	if len(graph) < 20 {
		t.Fatalf("go list found %d packages of ours; the test is not reading the module", len(graph))
	}
	for _, v := range violations(graph) {
		t.Error(v)
	}
}

// TestEachFunctionLinksOnlyItsStage: a function's binary holds its own
// stage and no other (go list -deps is what the linker may include).
func TestEachFunctionLinksOnlyItsStage(t *testing.T) {
	var fns []string
	for f := range functionStage {
		fns = append(fns, "./"+f)
	}
	deps := goList(t, "Deps", fns...)
	for f, want := range functionStage {
		var stages []string
		for _, d := range deps[f] {
			if role(d) == "stage" {
				stages = append(stages, d)
			}
		}
		if len(stages) != 1 || stages[0] != want {
			t.Errorf("%s links stages %v, want only %s", f, stages, want)
		}
	}
}

// TestViolationsFound: each rule catches a forbidden import added to a
// graph that was fine.
func TestViolationsFound(t *testing.T) {
	fine := map[string][]string{
		"shared/crawl":              nil,
		"shared/web/urlnorm":        {"shared/crawl"},
		"shared/stage/fetch":        {"shared/crawl", "shared/web/urlnorm"},
		"shared/aws/dynamo":         {"shared/crawl"},
		"shared/aws/handlers/fetch": {"shared/aws/dynamo", "shared/stage/fetch"},
		"shared/local/pipeline":     {"shared/local/sqlite", "shared/stage/fetch"},
		"shared/testkit/contract":   {"shared/stage/fetch", "shared/crawl"},
		"cmd/crawler":               {"shared/testkit/demosite", "shared/local/pipeline"},
	}
	if v := violations(fine); len(v) != 0 {
		t.Fatalf("a graph that keeps the rules: %v", v)
	}
	for _, c := range []struct{ from, to string }{
		{"shared/crawl", "shared/web/urlnorm"},
		{"shared/web/urlnorm", "shared/stage/fetch"},
		{"shared/web/robots", "shared/aws/dynamo"},
		{"shared/stage/fetch", "shared/aws/dynamo"},
		{"shared/stage/fetch", "shared/stage/parse"},
		{"shared/stage/parse", "shared/local/sqlite"},
		{"shared/aws/dynamo", "shared/stage/fetch"},
		{"shared/aws/handlers", "shared/stage/parse"},
		{"shared/aws/stack", "shared/stage/fetch"},
		{"shared/local/sqlite", "shared/stage/summarize"},
		{"shared/aws/dynamo", "shared/local/sqlite"},
		{"shared/local/pipeline", "shared/aws/sqsq"},
		{"shared/stage/fetch", "shared/testkit/testsite"},
	} {
		g := map[string][]string{}
		for k, v := range fine {
			g[k] = append([]string(nil), v...)
		}
		g[c.from] = append(g[c.from], c.to)
		if v := violations(g); len(v) != 1 || !strings.Contains(v[0], c.from+" imports "+c.to) {
			t.Errorf("%s importing %s: violations %v, want that one", c.from, c.to, v)
		}
	}
}
