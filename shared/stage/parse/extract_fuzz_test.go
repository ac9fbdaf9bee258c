package parse

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzExtract: no page makes Extract (or ExtractPlain, the same bytes
// served as text/plain) panic, and what it reads out stays bounded by
// the page: valid UTF-8 text no longer than a small multiple of the
// page, links that are absolute http(s) URLs and no more of them than
// the page has bytes to spell them.
func FuzzExtract(f *testing.F) {
	for _, s := range []string{
		`<!doctype html><html lang="en"><head><title>Lamps</title><meta name="description" content="Oil lamps"></head>` +
			`<body><nav><a href="/">Home</a></nav><h1>Lamps</h1><p>Oil &amp; wick.</p><a href="b.html#x" rel="nofollow">b</a></body></html>`,
		`<base href="http://other.example/dir/"><a href="../up">up</a><a href="javascript:x()">js</a><a href="http://[::1">bad</a>`,
		`<table><tr><td>` + strings.Repeat("<div>", 300) + `deep` + `</table>`,
		`<pre>  code  </pre><script>var a = "<a href=x>";</script><noscript><a href=/n>n</a></noscript>`,
		`<meta name="robots" content="noindex,nofollow"><link rel="canonical" href="/c"><img src="i.png" alt="i">`,
		`<script type="application/ld+json">{"datePublished":"2024-01-02"}</script><time datetime="2024-05-06">x</time>`,
		"\xff\xfe<\x00p\x00>\x00",
		"\n  ----\n  Release notes\t\n\nSee http://example.com/x.html\r\n" + strings.Repeat("long line ", 40),
		`<div role="main"><h1>T</h1><div><h3>Menu</h3><ul><li><a href="/a">a</a><ul><li><a href="/b">b</a></li></ul></li></ul></div>` +
			`<table><tr><td><a href="/c"><code>c()</code></a></td><td><p>Text <a href="#x">x</a>.</p></td></tr></table></div>`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		// The parse stage hands Extract text that textenc decoded: UTF-8.
		body = strings.ToValidUTF8(body, "\uFFFD")
		doc := Extract("http://example.com/dir/page.html", body, "")
		p := doc.Text
		text := p.Text + p.SecondaryText + p.BigHeadlines + p.SmallHeadlines + p.CodeText + p.QuoteText
		if !utf8.ValidString(text) {
			t.Fatalf("text is not UTF-8: %q", text)
		}
		if len(text) > 3*len(body)+64 {
			t.Fatalf("a %d-byte page gave %d bytes of text", len(body), len(text))
		}
		if len(doc.Links) > len(body)/4+1 {
			t.Fatalf("a %d-byte page gave %d links", len(body), len(doc.Links))
		}
		for _, l := range doc.Links {
			if !strings.HasPrefix(l.URL, "http://") && !strings.HasPrefix(l.URL, "https://") {
				t.Fatalf("link %q is not an absolute http(s) URL", l.URL)
			}
		}
		// The same bytes served as text/plain: no links, and a headline
		// that is a piece of the text, within its bound.
		plain := ExtractPlain("http://example.com/dir/notes.txt", body, "")
		if !utf8.ValidString(plain.Text.Text) || len(plain.Text.Text) > len(body) {
			t.Fatalf("a %d-byte text gave %d bytes of text, or not UTF-8", len(body), len(plain.Text.Text))
		}
		if len(plain.Links) != 0 {
			t.Fatalf("a plain text gave %d links", len(plain.Links))
		}
		if h := plain.Headline; h != nil && (!utf8.ValidString(*h) || len(*h) > maxPlainHeadline+len("…")) {
			t.Fatalf("headline %q: not UTF-8, or past %d bytes", *h, maxPlainHeadline)
		}
	})
}
