package parse

import (
	"reflect"
	"testing"

	"github.com/serverless-crawler/crawler/shared/crawl"
)

// TestExtractBlocks: blocks that are mostly link text are page chrome,
// marked up as such or not; blocks of sentences are content, links and
// all.
func TestExtractBlocks(t *testing.T) {
	tests := []struct {
		name     string
		html     string
		want     crawl.TextPile
		headline string
	}{
		{
			name: "a menu written as a div of links is chrome",
			html: `<div class="menu"><a href="/">Home</a> | <a href="/about">About</a> | <a href="/blog">Blog</a></div>
				<p>The keeper lights the lamp at dusk.</p>`,
			want: crawl.TextPile{Text: "The keeper lights the lamp at dusk.", SecondaryText: "Home | About | Blog"},
		},
		{
			name: "separators do not count: a bar of one-letter links is chrome",
			html: `<div class="jumpbox"><a href="#A">A</a> | <a href="#B">B</a> | <a href="#C">C</a> » <a href="#D">D</a></div>
				<p>Entries by letter.</p>`,
			want: crawl.TextPile{Text: "Entries by letter.", SecondaryText: "A | B | C » D"},
		},
		{
			name: "a paragraph with a link in it is content",
			html: `<p>The <a href="/keeper">keeper</a> lights the lamp at dusk, every day of the year.</p>`,
			want: crawl.TextPile{Text: "The keeper lights the lamp at dusk, every day of the year."},
		},
		{
			name: "the introduction stays, the table of contents below it goes",
			html: `<div role="main"><h1>Lamps</h1><p>How the lamps of the tower are kept burning.</p>
				<div class="toctree-wrapper"><ul><li><a href="oil.html">Oil lamps</a><ul><li><a href="oil.html#wick">Wicks</a></li></ul></li>
				<li><a href="gas.html">Gas lamps</a></li></ul></div></div>`,
			want: crawl.TextPile{Text: "How the lamps of the tower are kept burning.", BigHeadlines: "Lamps",
				SecondaryText: "Oil lamps\nWicks\nGas lamps"},
			headline: "Lamps",
		},
		{
			name: "a page that is only a list of links keeps its heading",
			html: `<title>Index</title><div role="main"><h1>Index – F</h1><table><tr><td><ul>
				<li><a href="a.html#f">f-string</a>, <a href="b.html#x">[1]</a></li><li><a href="c.html">float (built-in class)</a></li>
				</ul></td></tr></table></div>`,
			want:     crawl.TextPile{BigHeadlines: "Index – F", SecondaryText: "f-string, [1]\nfloat (built-in class)"},
			headline: "Index – F",
		},
		{
			name: "link text in code counts as link text",
			html: `<ul><li><a href="#sorted"><code>sorted()</code></a></li><li><a href="#len"><code>len()</code></a></li></ul>
				<p>Call <code>sorted()</code> on the list.</p>`,
			want: crawl.TextPile{Text: "Call on the list.", CodeText: "sorted()", SecondaryText: "sorted()\nlen()"},
		},
		{
			name: "a heading over nothing but chrome is chrome, and not the headline",
			html: `<title>Lamps</title><div><h3>Related pages</h3><ul><li><a href="/a">Oil lamps</a></li>
				<li><a href="/b">Gas lamps</a></li></ul></div><div><p>The lamp burns oil.</p></div>`,
			want:     crawl.TextPile{Text: "The lamp burns oil.", SecondaryText: "Oil lamps\nGas lamps\nRelated pages"},
			headline: "Lamps",
		},
		{
			name: "a block named chrome is chrome from its start, in order",
			html: `<title>Lamps</title><div class="sidebar"><h3>Related pages</h3><ul><li><a href="/a">Oil lamps</a></li>
				<li><a href="/b">Gas lamps</a></li></ul></div><div><p>The lamp burns oil.</p></div>`,
			want:     crawl.TextPile{Text: "The lamp burns oil.", SecondaryText: "Related pages\nOil lamps\nGas lamps"},
			headline: "Lamps",
		},
		{
			name: "a heading over content stays when a list of links in the same section goes",
			html: `<section><h2>Lamps</h2><p>The lamp burns oil.</p><ul><li><a href="/a">Oil lamps</a></li></ul></section>`,
			want: crawl.TextPile{Text: "The lamp burns oil.", BigHeadlines: "Lamps", SecondaryText: "Oil lamps"},
		},
		{
			name: "a layout table's column of links is chrome, its column of text is not",
			html: `<table><tr><td><a href="/">Home</a><br><a href="/news">News</a></td>
				<td><p>The lighthouse has stood at the harbour for a hundred years.</p></td></tr></table>`,
			want: crawl.TextPile{Text: "The lighthouse has stood at the harbour for a hundred years.", SecondaryText: "Home\nNews"},
		},
		{
			name: "the main landmark itself is content even when it is all links",
			html: `<main><a href="/a">Oil lamps</a> <a href="/b">Gas lamps</a></main>`,
			want: crawl.TextPile{Text: "Oil lamps Gas lamps"},
		},
		{
			name: "a list of sentences with a link each is content",
			html: `<ul><li>Trim the <a href="/wick">wick</a> before lighting the lamp each evening.</li>
				<li>Clean the glass with a dry cloth once a week.</li></ul>`,
			want: crawl.TextPile{Text: "Trim the wick before lighting the lamp each evening.\nClean the glass with a dry cloth once a week."},
		},
		{
			name: "a block that is mostly links but not all is chrome at the threshold",
			html: `<div>See: <a href="/a">Oil lamps and their wicks</a></div><p>Body text of the page.</p>`,
			want: crawl.TextPile{Text: "Body text of the page.", SecondaryText: "See: Oil lamps and their wicks"},
		},
		{
			name: "a table cell or a paragraph that is one link is content",
			html: `<table><tr><td><a href="/join"><code>os.path.join</code></a></td><td>Join paths intelligently.</td></tr></table>
				<p><a href="/tutorial">Read the tutorial first</a></p>`,
			want: crawl.TextPile{Text: "Join paths intelligently.\nRead the tutorial first", CodeText: "os.path.join"},
		},
		{
			name: "a paragraph of links is chrome",
			html: `<p><a href="/a">Lamps</a> | <a href="/b">Wicks</a></p><p>Body text of the page.</p>`,
			want: crawl.TextPile{Text: "Body text of the page.", SecondaryText: "Lamps | Wicks"},
		},
		{
			name: "DocBook's navigation tables, named, are chrome though their titles are not links",
			html: `<div class="navheader"><table><tr><th>2.1. Lamps</th></tr><tr><td><a href="p.html">Prev</a></td>
				<th>Chapter 2. Light</th><td><a href="n.html">Next</a></td></tr></table></div>
				<div class="sect1"><h2>2.1. Lamps</h2><p>The lamp burns oil.</p></div>
				<div class="navfooter"><table><tr><td><a href="p.html">Prev</a></td><td>2.0. Candles</td></tr></table></div>`,
			want: crawl.TextPile{Text: "The lamp burns oil.", SecondaryText: "2.1. Lamps\nPrev\nChapter 2. Light\nNext\nPrev\n2.0. Candles",
				BigHeadlines: "2.1. Lamps"},
		},
		{
			name: "footers, sidebars and breadcrumbs named by class or id",
			html: `<div id="breadcrumbs">Home › Lamps</div><p>The lamp burns oil.</p><div class="site-footer">© Lamp makers</div>
				<ul class="sidebar-links"><li>Oil</li></ul>`,
			want: crawl.TextPile{Text: "The lamp burns oil.", SecondaryText: "Home › Lamps\n© Lamp makers\nOil"},
		},
		{
			name: "a named wrapper around the page's h1 is not chrome",
			html: `<div class="has-sidebar"><h1>Lamps</h1><p>The lamp burns oil.</p></div>`,
			want: crawl.TextPile{Text: "The lamp burns oil.", BigHeadlines: "Lamps"},
		},
		{
			name: "a named wrapper around the main landmark is not chrome",
			html: `<div class="nav-open"><main><p>Trim the wick.</p></main></div>`,
			want: crawl.TextPile{Text: "Trim the wick."},
		},
		{
			name: "names are whole words, on blocks: a menu path and a header stay",
			html: `<p>Choose <span class="menu">File › Open</span>.</p><div class="entry-header"><h2>Oil</h2></div>
				<div class="navigable">Pick a wick.</div>`,
			want: crawl.TextPile{Text: "Choose File › Open.\nPick a wick.", BigHeadlines: "Oil"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := Extract(page, tt.html, "")
			want := tt.want
			want.Digest = want.ComputeDigest()
			if !reflect.DeepEqual(doc.Text, want) {
				t.Errorf("text pile\n got %+q\nwant %+q", fields(doc.Text), fields(want))
			}
			if tt.headline != "" && show(doc.Headline) != tt.headline {
				t.Errorf("headline %q, want %q", show(doc.Headline), tt.headline)
			}
		})
	}
}

func TestWordChars(t *testing.T) {
	for s, want := range map[string]int{
		"":              0,
		" | » · , ":     0,
		"Home | About":  9,
		"f-string, [1]": 8,
		"Crème brûlée":  11,
		"灯台は港の入り口に立って":  12,
	} {
		if got := wordChars(s); got != want {
			t.Errorf("wordChars(%q) = %d, want %d", s, got, want)
		}
	}
}
