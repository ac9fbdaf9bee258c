// Command readability compares go-readability with the crawler's
// parse.Extract on a corpus of HTML pages: speed (ms per page) and
// agreement on main-content words (docs/design.md, "Main content"). A
// module of its own, so that the library stays out of the crawler's:
//
//	eval "$(bench/inputs.sh)" && cd bench/readability && go run . -root "$DOC_ROOT" -rounds 3
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode"

	"golang.org/x/net/html"

	readability "codeberg.org/readeck/go-readability/v2"
	"github.com/serverless-crawler/crawler/shared/stage/parse"
)

type page struct {
	rel  string
	body string
	u    *url.URL
}

type result struct {
	Page        string   `json:"page"`
	Bytes       int      `json:"bytes"`
	RdErr       string   `json:"rd_err,omitempty"`
	RdNil       bool     `json:"rd_nil,omitempty"`
	RdChars     int      `json:"rd_chars"`
	OurChars    int      `json:"our_chars"`
	SecChars    int      `json:"sec_chars"`
	CodeChars   int      `json:"code_chars"`
	RdWords     int      `json:"rd_words"`
	OurWords    int      `json:"our_words"`
	Common      int      `json:"common"`
	RecRdInOurs float64  `json:"rec_rd_in_ours"` // |R∩O|/|R|
	RecOursInRd float64  `json:"rec_ours_in_rd"` // |R∩O|/|O|
	Jaccard     float64  `json:"jaccard"`
	RdInSec     int      `json:"rd_only_in_secondary"` // words of R not in O but in SecondaryText
	CodeWords   int      `json:"code_words"`
	CodeRec     float64  `json:"code_rec_in_rd"` // |C∩R|/|C|, C = words of CodeText
	HeadWords   int      `json:"head_words"`
	HeadRec     float64  `json:"head_rec_in_rd"` // |H∩R|/|H|, H = words of Big+SmallHeadlines
	SecWords    int      `json:"sec_words"`
	SecRec      float64  `json:"sec_rec_in_rd"` // |S∩R|/|S|
	RdOnly      []string `json:"rd_only_sample"`
	OursOnly    []string `json:"ours_only_sample"`
	RdMs        float64  `json:"rd_ms"`
	OurMs       float64  `json:"our_ms"`
}

func words(s string) map[string]struct{} {
	m := map[string]struct{}{}
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		m[w] = struct{}{}
	}
	return m
}

func rdText(p page) (string, string, bool) {
	a, err := readability.FromReader(strings.NewReader(p.body), p.u)
	if err != nil {
		return "", err.Error(), false
	}
	if a.Node == nil {
		return "", "", true
	}
	var sb strings.Builder
	_ = a.RenderText(&sb)
	return sb.String(), "", false
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	sort.Float64s(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func pct(xs []float64, p float64) float64 {
	s := slices.Clone(xs)
	sort.Float64s(s)
	i := int(p * float64(len(s)-1))
	return s[i]
}

func mean(xs []float64) float64 {
	t := 0.0
	for _, x := range xs {
		t += x
	}
	return t / float64(len(xs))
}

func sample(a, b map[string]struct{}, n int) []string {
	var out []string
	for w := range a {
		if _, ok := b[w]; !ok {
			out = append(out, w)
		}
	}
	sort.Strings(out)
	if len(out) > n {
		out = out[:n]
	}
	return out
}

func main() {
	root := flag.String("root", "", "the corpus: a folder of HTML pages (make bench's documentation tree)")
	out := flag.String("out", "readability-results.json", "write per-page results to this file")
	rounds := flag.Int("rounds", 1, "timed rounds (per-page time is the min over rounds)")
	dump := flag.String("dump", "", "directory to dump both texts per page")
	flag.Parse()
	if *root == "" {
		fmt.Fprintln(os.Stderr, "usage: readability -root DIR [-rounds N] [-out FILE] [-dump DIR]")
		os.Exit(2)
	}

	var pages []page
	_ = filepath.WalkDir(*root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".html") {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(*root, path)
		u, _ := url.Parse("http://127.0.0.1:8000/" + filepath.ToSlash(rel))
		pages = append(pages, page{rel: rel, body: string(b), u: u})
		return nil
	})
	sort.Slice(pages, func(i, j int) bool { return pages[i].rel < pages[j].rel })
	fmt.Fprintf(os.Stderr, "%d pages\n", len(pages))

	// Untimed warm-up pass over both.
	for _, p := range pages {
		rdText(p)
		parse.Extract(p.u.String(), p.body, "")
	}

	rdMs := make([]float64, len(pages))
	ourMs := make([]float64, len(pages))
	for i := range pages {
		rdMs[i], ourMs[i] = 1e18, 1e18
	}
	var rdTotal, ourTotal []float64
	for r := 0; r < *rounds; r++ {
		runtime.GC()
		t0 := time.Now()
		for i, p := range pages {
			s := time.Now()
			rdText(p)
			rdMs[i] = min(rdMs[i], float64(time.Since(s).Nanoseconds())/1e6)
		}
		rdTotal = append(rdTotal, float64(time.Since(t0).Nanoseconds())/1e6)
		runtime.GC()
		t0 = time.Now()
		for i, p := range pages {
			s := time.Now()
			parse.Extract(p.u.String(), p.body, "")
			ourMs[i] = min(ourMs[i], float64(time.Since(s).Nanoseconds())/1e6)
		}
		ourTotal = append(ourTotal, float64(time.Since(t0).Nanoseconds())/1e6)
	}

	// Split readability's cost: x/net/html parse alone vs readability on a
	// pre-parsed tree (ParseAndMutate + RenderText).
	{
		parseMs := make([]float64, len(pages))
		onTreeMs := make([]float64, len(pages))
		runtime.GC()
		for i, p := range pages {
			s := time.Now()
			doc, _ := html.Parse(strings.NewReader(p.body))
			parseMs[i] = float64(time.Since(s).Nanoseconds()) / 1e6
			s = time.Now()
			ps := readability.NewParser()
			a, err := ps.ParseAndMutate(doc, p.u)
			if err == nil && a.Node != nil {
				var sb strings.Builder
				_ = a.RenderText(&sb)
			}
			onTreeMs[i] = float64(time.Since(s).Nanoseconds()) / 1e6
		}
		fmt.Printf("html.Parse alone: median %.3f ms total %.0f ms; readability on parsed tree: median %.3f ms total %.0f ms\n",
			median(parseMs), mean(parseMs)*float64(len(pages)), median(onTreeMs), mean(onTreeMs)*float64(len(pages)))
	}

	var res []result
	for i, p := range pages {
		rt, rerr, rnil := rdText(p)
		d := parse.Extract(p.u.String(), p.body, "")
		ours := strings.Join([]string{d.Text.Text, d.Text.BigHeadlines, d.Text.SmallHeadlines, d.Text.CodeText, d.Text.QuoteText}, "\n")
		R, O, S := words(rt), words(ours), words(d.Text.SecondaryText)
		common := 0
		for w := range R {
			if _, ok := O[w]; ok {
				common++
			}
		}
		inSec := 0
		for w := range R {
			if _, ok := O[w]; !ok {
				if _, ok := S[w]; ok {
					inSec++
				}
			}
		}
		rec := func(c, n int) float64 {
			if n == 0 {
				return 0
			}
			return float64(c) / float64(n)
		}
		union := len(R) + len(O) - common
		inter := func(a map[string]struct{}) (n int) {
			for w := range a {
				if _, ok := R[w]; ok {
					n++
				}
			}
			return
		}
		C, H := words(d.Text.CodeText), words(d.Text.BigHeadlines+"\n"+d.Text.SmallHeadlines)
		if *dump != "" {
			base := filepath.Join(*dump, strings.ReplaceAll(p.rel, "/", "__"))
			_ = os.MkdirAll(*dump, 0o755)
			_ = os.WriteFile(base+".rd.txt", []byte(rt), 0o644)
			_ = os.WriteFile(base+".ours.txt", []byte(ours), 0o644)
			_ = os.WriteFile(base+".sec.txt", []byte(d.Text.SecondaryText), 0o644)
		}
		res = append(res, result{
			Page: p.rel, Bytes: len(p.body), RdErr: rerr, RdNil: rnil,
			RdChars: len(rt), OurChars: len(ours), SecChars: len(d.Text.SecondaryText), CodeChars: len(d.Text.CodeText),
			RdWords: len(R), OurWords: len(O), Common: common,
			RecRdInOurs: rec(common, len(R)), RecOursInRd: rec(common, len(O)), Jaccard: rec(common, union),
			RdInSec:   inSec,
			CodeWords: len(C), CodeRec: rec(inter(C), len(C)),
			HeadWords: len(H), HeadRec: rec(inter(H), len(H)),
			SecWords: len(S), SecRec: rec(inter(S), len(S)),
			RdOnly: sample(R, O, 12), OursOnly: sample(O, R, 12),
			RdMs: rdMs[i], OurMs: ourMs[i],
		})
	}
	f, err := os.Create(*out)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	enc := json.NewEncoder(f)
	enc.SetIndent("", " ")
	if err := enc.Encode(res); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	f.Close()

	var a, b, j []float64
	fails := 0
	for _, r := range res {
		if r.RdErr != "" || r.RdNil || r.RdWords == 0 {
			fails++
		}
		a = append(a, r.RecRdInOurs)
		b = append(b, r.RecOursInRd)
		j = append(j, r.Jaccard)
	}
	fmt.Printf("pages=%d\n", len(res))
	fmt.Printf("readability: ms/page median %.3f mean %.3f total %.0f ms (rounds totals %v)\n", median(rdMs), mean(rdMs), rdTotal[0], rdTotal)
	fmt.Printf("parse.Extract: ms/page median %.3f mean %.3f total %.0f ms (rounds totals %v)\n", median(ourMs), mean(ourMs), ourTotal[0], ourTotal)
	fmt.Printf("sum of per-page min: rd %.0f ms, ours %.0f ms\n", mean(rdMs)*float64(len(rdMs)), mean(ourMs)*float64(len(ourMs)))
	fmt.Printf("recall rd-in-ours: mean %.3f median %.3f p10 %.3f\n", mean(a), median(a), pct(a, 0.10))
	fmt.Printf("recall ours-in-rd: mean %.3f median %.3f p10 %.3f\n", mean(b), median(b), pct(b, 0.10))
	fmt.Printf("jaccard: mean %.3f median %.3f p10 %.3f\n", mean(j), median(j), pct(j, 0.10))
	fmt.Printf("readability empty/failed: %d\n", fails)
}
