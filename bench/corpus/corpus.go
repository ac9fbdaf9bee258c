// Package corpus gives the Go benchmarks real pages to work on: the demo
// site's, always there, and the Python 3.11 documentation's and the
// PostgreSQL manual's (Debian's python3.11-doc and postgresql-doc-15,
// unpacked by bench/inputs.sh), which benchmarks skip when they are
// absent.
package corpus

import (
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// Page is one HTML page and the path it is served at.
type Page struct {
	Path string // slash-separated, relative to the site's root
	Body string
}

// DocRootEnv names the environment variable that points at the Python
// documentation's HTML directory; by default it is looked for in the
// repository's .local-bench/.
const DocRootEnv = "BENCH_DOC_ROOT"

// docTree is where bench/inputs.sh unpacks the documentation, relative to
// the repository's root.
const docTree = ".local-bench/root/usr/share/doc/python3.11/html"

// PGDocRootEnv and pgDocTree are the same for the PostgreSQL manual.
const (
	PGDocRootEnv = "PG_DOC_ROOT"
	pgDocTree    = ".local-bench/root/usr/share/doc/postgresql-doc-15/html"
)

// PythonDocs returns the HTML pages of the Python 3.11 documentation, or
// skips tb when they are not unpacked.
func PythonDocs(tb testing.TB) []Page {
	tb.Helper()
	return unpacked(tb, "python3.11-doc", DocRootEnv, docTree)
}

// PostgresDocs returns the HTML pages of the PostgreSQL 15 manual, or
// skips tb when they are not unpacked.
func PostgresDocs(tb testing.TB) []Page {
	tb.Helper()
	return unpacked(tb, "postgresql-doc-15", PGDocRootEnv, pgDocTree)
}

// Dir returns the HTML pages under root.
func Dir(tb testing.TB, root string) []Page {
	tb.Helper()
	return load(tb, root)
}

// unpacked returns the pages of a tree bench/inputs.sh unpacks: at the
// directory env names, else at tree under the repository's root.
func unpacked(tb testing.TB, name, env, tree string) []Page {
	tb.Helper()
	root := os.Getenv(env)
	if root == "" {
		if repo, ok := repoRoot(); ok {
			root = filepath.Join(repo, tree)
		}
	}
	if _, err := os.Stat(filepath.Join(root, "index.html")); root == "" || err != nil {
		tb.Skipf("%s not unpacked (run bench/inputs.sh, or set %s)", name, env)
	}
	return load(tb, root)
}

// DemoSite returns the HTML pages of the demo site (shared/testkit/demosite/site).
func DemoSite(tb testing.TB) []Page {
	tb.Helper()
	repo, ok := repoRoot()
	if !ok {
		tb.Skip("repository root not found")
	}
	return load(tb, filepath.Join(repo, "shared", "testkit", "demosite", "site"))
}

// Bytes is the pages' total size.
func Bytes(pages []Page) int64 {
	var n int64
	for _, p := range pages {
		n += int64(len(p.Body))
	}
	return n
}

func load(tb testing.TB, root string) []Page {
	tb.Helper()
	var pages []Page
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".html") {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		pages = append(pages, Page{Path: filepath.ToSlash(rel), Body: string(b)})
		return nil
	})
	if err != nil {
		tb.Fatalf("read pages under %s: %v", root, err)
	}
	if len(pages) == 0 {
		tb.Fatalf("no HTML pages under %s", root)
	}
	sort.Slice(pages, func(i, j int) bool { return pages[i].Path < pages[j].Path })
	return pages
}

// repoRoot is the nearest directory above the working directory (a
// package's, under go test) whose go.mod is the crawler's module.
func repoRoot() (string, bool) {
	dir, err := os.Getwd()
	if err != nil {
		return "", false
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil &&
			strings.HasPrefix(string(b), "module github.com/serverless-crawler/crawler\n") {
			return dir, true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}
