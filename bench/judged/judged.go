// Package judged reads the judged queries of the search evaluation
// (bench/eval/*.tsv: a query, a tab, the pages that answer it separated
// by commas; lines starting with # are comments) and names a search
// hit's page the way they do.
package judged

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
	"strings"
)

// Query is one judged query and the pages, relative to the tree's root,
// that answer it.
type Query struct {
	Text     string
	Relevant []string
}

// Read reads a file of judged queries.
func Read(file string) ([]Query, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Query
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "" {
			continue
		}
		text, rel, ok := strings.Cut(line, "\t")
		if !ok || strings.TrimSpace(rel) == "" {
			return nil, fmt.Errorf("%s:%d: want query<TAB>pages", file, n)
		}
		out = append(out, Query{Text: text, Relevant: strings.Split(rel, ",")})
	}
	return out, sc.Err()
}

var origin = regexp.MustCompile(`^https?://[^/]+/`)

// Page is a hit's URL as a path relative to the tree's root, fragment
// and query dropped, as the judged queries name pages.
func Page(u string) string {
	p := origin.ReplaceAllString(u, "")
	if i := strings.IndexAny(p, "?#"); i >= 0 {
		p = p[:i]
	}
	if p == "" || strings.HasSuffix(p, "/") {
		p += "index.html"
	}
	return p
}
