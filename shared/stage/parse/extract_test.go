package parse

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/serverless-crawler/crawler/shared/crawl"
)

const page = "http://www.example.com/dir/page.html"

// show prints an optional string for comparisons: "<nil>" for nil.
func show(p *string) string {
	if p == nil {
		return "<nil>"
	}
	return *p
}

func showTime(p *int64) string {
	if p == nil {
		return "<nil>"
	}
	return time.Unix(*p, 0).UTC().Format(time.RFC3339)
}

const englishText = `The lighthouse has stood at the entrance to the harbour for more than a hundred years.
Every evening the keeper climbs the stairs and lights the lamp, so that ships find the safe way in.`

const japaneseText = "灯台は港の入り口に立っています。毎晩、灯台守が階段を上ってランプに火をともします。"

func TestExtractDescription(t *testing.T) {
	tests := []struct {
		name            string
		html            string
		contentLanguage string
		title, headline string
		description     string
		language        string
	}{
		{
			name: "title",
			html: `<title> The   Lamp
				Room </title><p>x</p>`,
			title: "The Lamp Room", headline: "The Lamp Room", description: "<nil>", language: "<nil>",
		},
		{
			name:  "og:title when there is no title",
			html:  `<meta property="og:title" content="Shared title"><p>x</p>`,
			title: "Shared title", headline: "Shared title", description: "<nil>", language: "<nil>",
		},
		{
			name: "main headline is the article's h1, not the site name in the header",
			html: `<meta property="og:site_name" content="Harbour Light"><title>Lamps</title>
				<header><h1>Harbour Light</h1></header><article><h1>Lamps  of the tower</h1></article>`,
			title: "Lamps", headline: "Lamps of the tower", description: "<nil>", language: "<nil>",
		},
		{
			name:  "h1 in main beats an earlier h1 elsewhere",
			html:  `<div><h1>Teaser</h1></div><main><h1>Real headline</h1></main>`,
			title: "<nil>", headline: "Real headline", description: "<nil>", language: "<nil>",
		},
		{
			name:  "h1 outside page chrome beats h1 in header",
			html:  `<header><h1>Logo text</h1></header><div><h1>Body headline</h1></div>`,
			title: "<nil>", headline: "Body headline", description: "<nil>", language: "<nil>",
		},
		{
			name:  "the site name alone is no headline",
			html:  `<meta property="og:site_name" content="Harbour Light"><header><h1>Harbour light</h1></header>`,
			title: "<nil>", headline: "<nil>", description: "<nil>", language: "<nil>",
		},
		{
			name:  "without an h1, the first heading of another level in the main content",
			html:  `<title>Site | Page</title><header><h2>Menu</h2></header><div><h3>Aside</h3></div><article><h2>Section</h2></article>`,
			title: "Site | Page", headline: "Section", description: "<nil>", language: "<nil>",
		},
		{
			name:  "without main content, the first heading outside chrome",
			html:  `<title>Site | Page</title><nav><h2>Menu</h2></nav><div><h4>Notes  on lamps</h4></div>`,
			title: "Site | Page", headline: "Notes on lamps", description: "<nil>", language: "<nil>",
		},
		{
			name: "without headings, og:title, then Dublin Core, then the title",
			html: `<title>Page title</title><meta name="DC.title" content="Dublin title">
				<meta property="og:title" content="Shared title"><nav><h1>Menu</h1></nav>`,
			title: "Page title", headline: "Shared title", description: "<nil>", language: "<nil>",
		},
		{
			name:  "Dublin Core title and description",
			html:  `<meta name="DC.title" content="Dublin title"><meta name="dcterms.description" content="Dublin description.">`,
			title: "<nil>", headline: "Dublin title", description: "Dublin description.", language: "<nil>",
		},
		{
			name:  "the title before an h1 in page chrome",
			html:  `<title>Page title</title><header><h1>Banner words</h1></header>`,
			title: "Page title", headline: "Page title", description: "<nil>", language: "<nil>",
		},
		{
			name:  "an h1 in page chrome when there is nothing else",
			html:  `<header><h1>Banner words</h1></header>`,
			title: "<nil>", headline: "Banner words", description: "<nil>", language: "<nil>",
		},
		{
			name: "meta description before og:description",
			html: `<meta property="og:description" content="From Open Graph.">
				<meta name="Description" content="  From the
				meta tag. ">`,
			title: "<nil>", headline: "<nil>", description: "From the meta tag.", language: "<nil>",
		},
		{
			name:  "og:description when there is no meta description",
			html:  `<meta property="og:description" content="From Open Graph.">`,
			title: "<nil>", headline: "<nil>", description: "From Open Graph.", language: "<nil>",
		},
		{
			name:  "language from html lang",
			html:  `<html lang="en-GB"><p>x</p></html>`,
			title: "<nil>", headline: "<nil>", description: "<nil>", language: "en",
		},
		{
			name: "html lang wins over Content-Language",
			html: `<html lang="fr"><p>x</p></html>`, contentLanguage: "de",
			title: "<nil>", headline: "<nil>", description: "<nil>", language: "fr",
		},
		{
			name:  "language from a meta http-equiv",
			html:  `<meta http-equiv="Content-Language" content="nl-BE"><p>x</p>`,
			title: "<nil>", headline: "<nil>", description: "<nil>", language: "nl",
		},
		{
			name: "language from Content-Language, first of a list",
			html: `<p>x</p>`, contentLanguage: "de-AT, en",
			title: "<nil>", headline: "<nil>", description: "<nil>", language: "de",
		},
		{
			name:  "language detected from English text",
			html:  `<html><p>` + englishText + `</p></html>`,
			title: "<nil>", headline: "<nil>", description: "<nil>", language: "en",
		},
		{
			name:  "language detected from Japanese text",
			html:  `<p>` + japaneseText + `</p>`,
			title: "<nil>", headline: "<nil>", description: "<nil>", language: "ja",
		},
		{
			name:  "an invalid lang falls back to detection",
			html:  `<html lang="12"><p>` + englishText + `</p></html>`,
			title: "<nil>", headline: "<nil>", description: "<nil>", language: "en",
		},
		{
			name:  "too little text to detect",
			html:  `<p>Home About Contact Blog</p>`,
			title: "<nil>", headline: "<nil>", description: "<nil>", language: "<nil>",
		},
		{
			name:  "navigation text is not used to detect",
			html:  `<nav>` + englishText + `</nav><p>Lamps</p>`,
			title: "<nil>", headline: "<nil>", description: "<nil>", language: "<nil>",
		},
		{
			name: "the detector is not sure",
			html: `<p>Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor
				incididunt ut labore et dolore magna aliqua.</p>`,
			title: "<nil>", headline: "<nil>", description: "<nil>", language: "<nil>",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := Extract(page, tt.html, tt.contentLanguage)
			got := []string{show(d.Title), show(d.Headline), show(d.Description), show(d.Language)}
			want := []string{tt.title, tt.headline, tt.description, tt.language}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("title, headline, description, language = %q, want %q", got, want)
			}
		})
	}
}

func TestExtractTimes(t *testing.T) {
	tests := []struct {
		name             string
		html             string
		created, updated string
	}{
		{
			name: "Open Graph article times",
			html: `<meta property="article:published_time" content="2024-03-01T10:00:00+01:00">
				<meta property="article:modified_time" content="2024-03-05T08:30:00Z">`,
			created: "2024-03-01T09:00:00Z", updated: "2024-03-05T08:30:00Z",
		},
		{
			name: "JSON-LD dates",
			html: `<script type="application/ld+json">{"@context":"https://schema.org","@type":"Article",
				"datePublished":"2023-12-24","dateModified":"2024-01-02T03:04:05.678Z"}</script>`,
			created: "2023-12-24T00:00:00Z", updated: "2024-01-02T03:04:05Z",
		},
		{
			name: "JSON-LD @graph",
			html: `<script type="application/ld+json">{"@graph":[{"@type":"WebSite"},
				{"@type":"BlogPosting","datePublished":"2022-06-01T12:00:00Z"}]}</script>`,
			created: "2022-06-01T12:00:00Z", updated: "<nil>",
		},
		{
			name: "meta tags win over JSON-LD",
			html: `<meta property="article:published_time" content="2024-03-01T10:00:00Z">
				<script type="application/ld+json">{"datePublished":"2020-01-01","dateModified":"2020-02-02"}</script>`,
			created: "2024-03-01T10:00:00Z", updated: "2020-02-02T00:00:00Z",
		},
		{
			name:    "unreadable dates are left out",
			html:    `<meta property="article:published_time" content="last Tuesday"><script type="application/ld+json">{broken</script>`,
			created: "<nil>", updated: "<nil>",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := Extract(page, tt.html, "")
			if c, u := showTime(d.TimeCreated), showTime(d.TimeUpdated); c != tt.created || u != tt.updated {
				t.Errorf("created %s, updated %s; want %s, %s", c, u, tt.created, tt.updated)
			}
		})
	}
}

func TestExtractText(t *testing.T) {
	tests := []struct {
		name string
		html string
		want crawl.TextPile
	}{
		{
			name: "whitespace is normalized, blocks are lines",
			html: "<p>  The keeper\n\t lights   the <b>lamp</b>. </p>\n\n<div>At <i>dusk</i>.<p>Every day</p>without fail</div>",
			want: crawl.TextPile{Text: "The keeper lights the lamp.\nAt dusk.\nEvery day\nwithout fail"},
		},
		{
			name: "page chrome is secondary text",
			html: `<header>Site name</header><nav><a href="/">Home</a> <a href="/a">About</a></nav>
				<main><p>Main text.</p></main><aside>Related</aside><footer>Copyright</footer>`,
			want: crawl.TextPile{Text: "Main text.", SecondaryText: "Site name\nHome About\nRelated\nCopyright"},
		},
		{
			name: "ARIA landmarks are chrome as their elements are",
			html: `<div role="banner">Site name</div><div class="related" role="navigation"><a href="/">Home</a></div>
				<div role="main"><p>Main text.</p></div><div role="complementary">Related</div>
				<div role="contentinfo">Copyright</div>`,
			want: crawl.TextPile{Text: "Main text.", SecondaryText: "Site name\nHome\nRelated\nCopyright"},
		},
		{
			name: "with a main landmark, text outside it is chrome",
			html: `<div class="topbar">index | modules | next</div><main><p>Main text.</p><nav>Pages: 1 2</nav></main>
				<div class="footer">Copyright, the Foundation.</div>`,
			want: crawl.TextPile{Text: "Main text.", SecondaryText: "index | modules | next\nPages: 1 2\nCopyright, the Foundation."},
		},
		{
			name: "an article's own header is its text, not chrome",
			html: `<article><header><h1>Post title</h1><p>By the keeper</p></header><p>Body.</p>
				<footer>Filed under lamps</footer></article>`,
			want: crawl.TextPile{Text: "By the keeper\nBody.\nFiled under lamps", BigHeadlines: "Post title"},
		},
		{
			name: "big and small headlines",
			html: `<h1>One</h1><h2>Two</h2><p>Text</p><h3>Three</h3><h4>Four</h4><h5>Five</h5><h6>Six</h6>`,
			want: crawl.TextPile{Text: "Text", BigHeadlines: "One\nTwo", SmallHeadlines: "Three\nFour\nFive\nSix"},
		},
		{
			name: "code keeps its lines; inline code pieces stay apart",
			html: "<p>Call <code>on()</code> then <code>off()</code>.</p><pre>\nif dark {\n    light()\n}   \n\n</pre>",
			want: crawl.TextPile{Text: "Call then .", CodeText: "on()\noff()\nif dark {\n    light()\n}"},
		},
		{
			name: "kbd and samp are code",
			html: "<p>Press <kbd>Enter</kbd> to see <samp>OK</samp>.</p>",
			want: crawl.TextPile{Text: "Press to see .", CodeText: "Enter\nOK"},
		},
		{
			name: "quotes",
			html: `<blockquote><p>Keep it   burning.</p><p>Always.</p></blockquote><p>She said <q>yes</q> and <q>no</q>.</p>`,
			want: crawl.TextPile{Text: "She said and .", QuoteText: "Keep it burning.\nAlways.\nyes\nno"},
		},
		{
			name: "scripts, styles and templates are not text",
			html: `<style>p{color:red}</style><script>var x = 1;</script><p>Seen</p><template><p>Unseen</p></template>
				<noscript>Enable JS</noscript>`,
			want: crawl.TextPile{Text: "Seen"},
		},
		{
			name: "the title is not body text",
			html: `<title>Title</title><p>Body</p>`,
			want: crawl.TextPile{Text: "Body"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Extract(page, tt.html, "").Text
			want := tt.want
			want.Digest = want.ComputeDigest()
			if !reflect.DeepEqual(got, want) {
				t.Errorf("text pile\n got %+q\nwant %+q", fields(got), fields(want))
			}
		})
	}
}

func fields(p crawl.TextPile) []string {
	return []string{p.Text, p.SecondaryText, p.BigHeadlines, p.SmallHeadlines, p.CodeText, p.QuoteText}
}

// onlyLink extracts a page and returns its one link.
func onlyLink(t *testing.T, pageURL, html string) crawl.Link {
	t.Helper()
	d := Extract(pageURL, html, "")
	if len(d.Links) != 1 {
		t.Fatalf("%d links, want 1: %+v", len(d.Links), d.Links)
	}
	return d.Links[0]
}

func TestExtractLinkLocation(t *testing.T) {
	tests := []struct {
		name             string
		html             string
		want             crawl.Location
		containsHeadline bool
	}{
		{"nowhere in particular", `<a href="/x">x</a>`, crawl.Location{}, false},
		{"header", `<header><a href="/x">x</a></header>`, crawl.Location{InHeader: true}, false},
		{"nav list", `<nav><ul><li><a href="/x">x</a></li></ul></nav>`, crawl.Location{InNav: true, InList: true}, false},
		{"main and article paragraph", `<main><article><p>See <a href="/x">x</a></p></article></main>`,
			crawl.Location{InMain: true, InArticle: true, InParagraph: true}, false},
		{"aside", `<aside><a href="/x">x</a></aside>`, crawl.Location{InAside: true}, false},
		{"role navigation", `<div role="navigation"><a href="/x">x</a></div>`, crawl.Location{InNav: true}, false},
		{"role search", `<div role="search"><a href="/x">x</a></div>`, crawl.Location{InNav: true}, false},
		{"role banner", `<div role="banner"><a href="/x">x</a></div>`, crawl.Location{InHeader: true}, false},
		{"role contentinfo", `<div role="contentinfo"><a href="/x">x</a></div>`, crawl.Location{InFooter: true}, false},
		{"role complementary", `<div role="complementary"><a href="/x">x</a></div>`, crawl.Location{InAside: true}, false},
		{"role main", `<div role=" Main "><a href="/x">x</a></div>`, crawl.Location{InMain: true}, false},
		{"footer", `<footer><a href="/x">x</a></footer>`, crawl.Location{InFooter: true}, false},
		{"header of an article", `<article><header><a href="/x">x</a></header></article>`,
			crawl.Location{InHeader: true, InArticle: true}, false},
		{"section", `<section><a href="/x">x</a></section>`, crawl.Location{InSection: true}, false},
		{"table", `<table><tr><td><a href="/x">x</a></td></tr></table>`, crawl.Location{InTable: true}, false},
		{"figure", `<figure><figcaption><a href="/x">x</a></figcaption></figure>`, crawl.Location{InFigure: true}, false},
		{"address", `<address><a href="/x">x</a></address>`, crawl.Location{InAddress: true}, false},
		{"form", `<form><a href="/x">x</a></form>`, crawl.Location{InForm: true}, false},
		{"ordered list", `<ol><li><a href="/x">x</a></li></ol>`, crawl.Location{InList: true}, false},
		{"definition list", `<dl><dd><a href="/x">x</a></dd></dl>`, crawl.Location{InList: true}, false},
		{"in a headline", `<h2><a href="/x">x</a></h2>`, crawl.Location{InHeadline: true}, false},
		{"in code", `<pre><a href="/x">x</a></pre>`, crawl.Location{InCode: true}, false},
		{"contains a headline", `<a href="/x"><h3>Title</h3></a>`, crawl.Location{}, true},
		{"everything at once", `<body><form><main><article><section><table><tr><td><figure><address><ul><li><p><code>
			<a href="/x">x</a></code></p></li></ul></address></figure></td></tr></table></section></article></main></form>`,
			crawl.Location{InForm: true, InMain: true, InArticle: true, InSection: true, InTable: true, InFigure: true,
				InAddress: true, InList: true, InParagraph: true, InCode: true}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := onlyLink(t, page, tt.html)
			if l.Location != tt.want || l.ContainsHeadline != tt.containsHeadline {
				t.Errorf("location %+v, contains headline %v; want %+v, %v", l.Location, l.ContainsHeadline, tt.want, tt.containsHeadline)
			}
		})
	}
}

func TestExtractLinkRel(t *testing.T) {
	tests := []struct {
		rel                  string
		nofollow, me, tagRel bool
	}{
		{"", false, false, false},
		{"nofollow", true, false, false},
		{"noopener NOFOLLOW noreferrer", true, false, false},
		{"sponsored", true, false, false},
		{"ugc", true, false, false},
		{"me", false, true, false},
		{"tag", false, false, true},
		{"me\ttag\nnofollow", true, true, true},
		{"nofollowed metal tags", false, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.rel, func(t *testing.T) {
			l := onlyLink(t, page, `<a href="/x" rel="`+tt.rel+`">x</a>`)
			if l.RelNofollow != tt.nofollow || l.RelMe != tt.me || l.RelTag != tt.tagRel {
				t.Errorf("nofollow %v, me %v, tag %v; want %v, %v, %v", l.RelNofollow, l.RelMe, l.RelTag, tt.nofollow, tt.me, tt.tagRel)
			}
		})
	}
}

func TestExtractDestinationType(t *testing.T) {
	tests := []struct {
		name, html string
		want       crawl.DestinationType
		tag, text  string
	}{
		{"anchor", `<a href="/x"> Read <b>more</b> </a>`, crawl.DestPage, "a", "Read more"},
		{"image link named by its alt", `<a href="/x"><img src="/i.png" alt="The lamp"></a>`, crawl.DestPage, "a", "The lamp"},
		{"image map area", `<map><area href="/x" alt="North tower"></map>`, crawl.DestPage, "area", "North tower"},
		{"alternate language", `<link rel="alternate" hreflang="fr" href="/x">`, crawl.DestAlternate, "link", "<nil>"},
		{"RSS feed", `<link rel="alternate" type="application/rss+xml" title="News" href="/x">`, crawl.DestFeed, "link", "News"},
		{"Atom feed", `<link rel="alternate" type="application/atom+xml" href="/x">`, crawl.DestFeed, "link", "<nil>"},
		{"canonical", `<link rel="canonical" href="/x">`, crawl.DestCanonical, "link", "<nil>"},
		{"stylesheet", `<link rel="stylesheet" href="/x">`, crawl.DestStylesheet, "link", "<nil>"},
		{"alternate stylesheet", `<link rel="alternate stylesheet" href="/x">`, crawl.DestStylesheet, "link", "<nil>"},
		{"other link", `<link rel="icon" href="/x">`, crawl.DestOther, "link", "<nil>"},
		{"next page", `<link rel="next" title="Installing" href="/x">`, crawl.DestNavigation, "link", "Installing"},
		{"index page", `<link rel="index" title="Index" href="/x">`, crawl.DestNavigation, "link", "Index"},
		{"search page", `<link rel="search" href="/x">`, crawl.DestNavigation, "link", "<nil>"},
		{"OpenSearch description", `<link rel="search" type="application/opensearchdescription+xml" href="/x">`, crawl.DestOther, "link", "<nil>"},
		{"preload", `<link rel="preload" href="/x">`, crawl.DestOther, "link", "<nil>"},
		{"iframe", `<iframe src="/x" title="Map"></iframe>`, crawl.DestEmbed, "iframe", "Map"},
		{"anchor without text", `<a href="/x"></a>`, crawl.DestPage, "a", "<nil>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := onlyLink(t, page, tt.html)
			if l.DestinationType != tt.want || l.TagName != tt.tag || show(l.Text) != tt.text || l.URL != "http://www.example.com/x" {
				t.Errorf("got %v %q %q %s, want %v %q %q", l.DestinationType, l.TagName, show(l.Text), l.URL, tt.want, tt.tag, tt.text)
			}
		})
	}
}

func TestExtractLinkTargets(t *testing.T) {
	tests := []struct {
		name     string
		page     string
		html     string
		url      string
		fragment string
		locality crawl.Locality
	}{
		{"fragment of the same document", page, `<a href="#top">x</a>`, page, "top", crawl.LocalitySameDocument},
		{"the page itself", page, `<a href="page.html">x</a>`, page, "<nil>", crawl.LocalitySameDocument},
		{"relative", page, `<a href="../up.html#s2">x</a>`, "http://www.example.com/up.html", "s2", crawl.LocalitySameHost},
		{"same host, other scheme", page, `<a href="https://WWW.example.com/">x</a>`, "https://www.example.com/", "<nil>", crawl.LocalitySameHost},
		{"same site", page, `<a href="http://blog.example.com/">x</a>`, "http://blog.example.com/", "<nil>", crawl.LocalitySameSite},
		{"same site, other port", page, `<a href="http://example.com:8080/">x</a>`, "http://example.com:8080/", "<nil>", crawl.LocalitySameSite},
		{"external", page, `<a href="//example.org/">x</a>`, "http://example.org/", "<nil>", crawl.LocalityExternal},
		{"public suffix: other site", "https://alice.github.io/", `<a href="https://bob.github.io/">x</a>`,
			"https://bob.github.io/", "<nil>", crawl.LocalityExternal},
		{"two-label public suffix", "http://www.lamps.co.uk/", `<a href="http://shop.lamps.co.uk/">x</a>`,
			"http://shop.lamps.co.uk/", "<nil>", crawl.LocalitySameSite},
		{"other IP address", "http://127.0.0.1:8080/", `<a href="http://127.0.0.2:8080/">x</a>`,
			"http://127.0.0.2:8080/", "<nil>", crawl.LocalityExternal},
		{"private addresses are no site", "http://10.0.0.1/", `<a href="http://192.168.0.1/">x</a>`,
			"http://192.168.0.1/", "<nil>", crawl.LocalityExternal},
		{"localhost, other port", "http://localhost:8080/", `<a href="http://localhost:9090/">x</a>`,
			"http://localhost:9090/", "<nil>", crawl.LocalityExternal},
		{"same IP, other port", "http://127.0.0.1:8080/", `<a href="http://127.0.0.1:9090/">x</a>`,
			"http://127.0.0.1:9090/", "<nil>", crawl.LocalityExternal},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := onlyLink(t, tt.page, tt.html)
			if l.URL != tt.url || show(l.Fragment) != tt.fragment || l.Locality != tt.locality {
				t.Errorf("got %s #%s locality %d, want %s #%s locality %d", l.URL, show(l.Fragment), l.Locality, tt.url, tt.fragment, tt.locality)
			}
		})
	}
}

func TestExtractBase(t *testing.T) {
	tests := []struct {
		name string
		html string
		want []string
	}{
		{"no base", `<a href="a.html">a</a>`, []string{"http://www.example.com/dir/a.html"}},
		{"absolute base", `<base href="http://cdn.example.org/assets/"><a href="a.html">a</a><a href="/b.html">b</a>`,
			[]string{"http://cdn.example.org/assets/a.html", "http://cdn.example.org/b.html"}},
		{"relative base is resolved against the page", `<base href="/other/"><a href="a.html">a</a>`,
			[]string{"http://www.example.com/other/a.html"}},
		{"only the first base with an href counts", `<base target="_top"><base href="/one/"><base href="/two/"><a href="a.html">a</a>`,
			[]string{"http://www.example.com/one/a.html"}},
		{"the base applies to links before it", `<body><a href="a.html">a</a><base href="/late/"></body>`,
			[]string{"http://www.example.com/late/a.html"}},
		{"a non-http base is ignored", `<base href="javascript:void(0)"><a href="a.html">a</a>`,
			[]string{"http://www.example.com/dir/a.html"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, l := range Extract(page, tt.html, "").Links {
				got = append(got, l.URL)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("links %q, want %q", got, tt.want)
			}
		})
	}
	// A fragment link resolves against the base too: with another base it
	// is not the same document.
	l := onlyLink(t, page, `<base href="http://www.example.com/"><a href="#top">x</a>`)
	if l.URL != "http://www.example.com/" || l.Locality != crawl.LocalitySameHost {
		t.Errorf("fragment link under a base: %s locality %d", l.URL, l.Locality)
	}
}

func TestExtractCanonicalAndRobots(t *testing.T) {
	tests := []struct {
		name              string
		html              string
		canonical         string
		noindex, nofollow bool
	}{
		{"nothing", `<p>x</p>`, "<nil>", false, false},
		{"canonical elsewhere", `<link rel="canonical" href="/dir/page.html?ref=1">`, "http://www.example.com/dir/page.html?ref=1", false, false},
		{"canonical is the page itself", `<link rel="canonical" href="http://WWW.example.com/dir/page.html">`, "<nil>", false, false},
		{"the first canonical counts", `<link rel="canonical" href="/a"><link rel="canonical" href="/b">`, "http://www.example.com/a", false, false},
		{"noindex", `<meta name="robots" content="NOINDEX, follow">`, "<nil>", true, false},
		{"nofollow", `<meta name="ROBOTS" content="nofollow">`, "<nil>", false, true},
		{"none", `<meta name="robots" content="none">`, "<nil>", true, true},
		{"other crawlers' directives are not ours", `<meta name="otherbot" content="noindex">`, "<nil>", false, false},
		{"a canonical longer than a candidate's URL may be", `<link rel="canonical" href="/` + strings.Repeat("c", crawl.MaxKeptURLLength) + `">`, "<nil>", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := Extract(page, `<title>T</title>`+tt.html, "")
			if show(d.CanonicalURL) != tt.canonical || d.NoIndex != tt.noindex || d.NoFollow != tt.nofollow {
				t.Errorf("canonical %s, noindex %v, nofollow %v; want %s, %v, %v", show(d.CanonicalURL), d.NoIndex, d.NoFollow,
					tt.canonical, tt.noindex, tt.nofollow)
			}
			if tt.noindex && d.Indexiness != 0 {
				t.Errorf("noindex page has indexiness %d", d.Indexiness)
			}
		})
	}
}

func TestExtractUnfollowableLinks(t *testing.T) {
	d := Extract(page, `<a href="mailto:keeper@example.com">m</a><a href="javascript:void(0)">j</a><a href="tel:+1">t</a>
		<a href="http://exa mple.com/">bad</a><a href="/ok">ok</a>`, "")
	if len(d.Links) != 1 || d.Links[0].URL != "http://www.example.com/ok" {
		t.Errorf("links %+v, want only /ok", d.Links)
	}
	if !reflect.DeepEqual(d.InvalidLinks, []string{"http://exa mple.com/"}) {
		t.Errorf("invalid links %q", d.InvalidLinks)
	}
}

func TestExtractIndexiness(t *testing.T) {
	long := strings.Repeat("word ", 600)
	tests := []struct {
		name string
		html string
		want int
	}{
		{"empty", ``, 0},
		{"title only", `<title>T</title>`, 20},
		{"title, headline, description", `<title>T</title><meta name="description" content="D"><h1>H</h1>`, 50},
		{"everything", `<title>T</title><meta name="description" content="D"><h1>H</h1><p>` + long + `</p>`, 100},
		{"navigation text does not count", `<nav>` + long + `</nav>`, 0},
		{"noindex", `<meta name="robots" content="noindex"><title>T</title><p>` + long + `</p>`, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Extract(page, tt.html, "").Indexiness; got != tt.want {
				t.Errorf("indexiness %d, want %d", got, tt.want)
			}
		})
	}
}

// TestDetectLanguageSample: the detector reads the first detectSample
// bytes of a long page (cut on a character), and tells its language as
// it does for a short one.
func TestDetectLanguageSample(t *testing.T) {
	fr := "Le gardien du phare allume la lampe chaque soir et surveille la mer jusqu'au matin. "
	de := "Der Leuchtturmwärter zündet jeden Abend die Lampe an und bewacht das Meer bis zum Morgen. "
	b, err := os.ReadFile(filepath.Join("testdata", "english-long.txt"))
	if err != nil {
		t.Fatal(err)
	}
	english := string(b)
	for _, tc := range []struct {
		name, text, want string
	}{
		{"short French", fr + fr, "fr"},
		{"long French", strings.Repeat(fr, 5000), "fr"},
		{"long German, multi-byte letters at the cut", strings.Repeat(de, 5000), "de"},
		{"French first, German past the sample", strings.Repeat(fr, 400) + strings.Repeat(de, 5000), "fr"},
		// Varied English prose (the head of docs/design.md): read whole,
		// past about 4 KiB, whatlanggo called it unreliable.
		{"long varied English", english, "en"},
	} {
		if got := detectLanguage(tc.text); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestPlainlyEnglish: the shortcut takes English prose, and leaves
// short text, other languages in Latin letters, and text in a script
// not split by spaces (whatever English its code holds) to the
// detector, whose answer it never contradicts.
func TestPlainlyEnglish(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "english-long.txt"))
	if err != nil {
		t.Fatal(err)
	}
	english := sample(string(b))
	nl := "De vuurtorenwachter steekt elke avond de lamp aan en bewaakt de zee tot de ochtend, of het nu stormt of niet. Het was een lange nacht. "
	ja := "灯台守は毎晩ランプを灯し、朝まで海を見守ります。嵐の夜も静かな夜も同じです。"
	code := " for the file in the list of files with the name and the path of it "
	for _, tc := range []struct {
		name, text string
		plain      bool
		want       string
	}{
		{"English prose", english, true, "en"},
		{"short English", "Read the file and print the lines of it, one by one.", false, ""},
		{"French", strings.Repeat("Le gardien du phare allume la lampe chaque soir et surveille la mer jusqu'au matin. ", 20), false, "fr"},
		{"German", strings.Repeat("Der Leuchtturmwärter zündet jeden Abend die Lampe an und bewacht das Meer bis zum Morgen. ", 20), false, "de"},
		{"Dutch", strings.Repeat(nl, 10), false, ""}, // whatlanggo is unsure
		{"Japanese with English code", strings.Repeat(strings.Repeat(ja, 4)+code, 3), true, "ja"},
	} {
		if got := plainlyEnglish(tc.text); got != tc.plain {
			t.Errorf("%s: plainlyEnglish %v, want %v", tc.name, got, tc.plain)
		}
		if got := detectLanguage(tc.text); got != tc.want {
			t.Errorf("%s: detectLanguage %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestSpaceRuns(t *testing.T) {
	for s, want := range map[string]string{
		"":                  "",
		"lamp":              "lamp",
		"the lamp room":     "the lamp room",
		" lamp ":            " lamp ",
		"the  lamp":         "the lamp",
		"the\nlamp":         "the lamp",
		"\n\t lamp \r\n\f":  " lamp ",
		"crème\u00a0brûlée": "crème\u00a0brûlée", // a no-break space is not HTML whitespace
	} {
		if got := spaceRuns(s); got != want {
			t.Errorf("spaceRuns(%q) = %q, want %q", s, got, want)
		}
	}
}

// TestExtractMetaBounded: meta fields as long as a page makes them keep
// their head only (the AWS home keeps them in one item of at most 400 KB).
func TestExtractMetaBounded(t *testing.T) {
	long := strings.Repeat("word ", 100_000)
	for _, tc := range []struct{ name, html string }{
		{"description", `<title>T</title><meta name="description" content="` + long + `">`},
		{"og:description", `<title>T</title><meta property="og:description" content="` + long + `">`},
		{"dc.description", `<title>T</title><meta name="dc.description" content="` + long + `">`},
		{"og:title", `<meta property="og:title" content="` + long + `">`},
		{"dc.title", `<meta name="dc.title" content="` + long + `">`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := Extract(page, tc.html+"<p>Body text.</p>", "")
			for field, v := range map[string]*string{"title": d.Title, "headline": d.Headline, "description": d.Description} {
				if v != nil && len(*v) > maxField+len("…") {
					t.Errorf("%s of %d bytes, want at most %d", field, len(*v), maxField)
				}
			}
			if d.Title == nil && d.Description == nil && d.Headline == nil {
				t.Error("the field was not read at all")
			}
		})
	}
}
