package parse

import (
	"net/url"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/serverless-crawler/crawler/shared/crawl"
	"github.com/serverless-crawler/crawler/shared/web/urlnorm"
)

// flatSkipped are the elements whose text the flat reader skips. Unlike
// the tree walk it leaves out elements whose end tag may be implied
// (<option>), since it counts start and end tags to know where it is.
var flatSkipped = map[atom.Atom]bool{
	atom.Script: true, atom.Style: true, atom.Noscript: true, atom.Template: true, atom.Svg: true, atom.Math: true,
	atom.Textarea: true,
}

// extractFlat reads a page with the tokenizer alone, for pages whose
// tree html.Parse will not build: the title, meta tags, main text and
// every link, without location signatures or text kinds.
func extractFlat(doc *crawl.Document, page *url.URL, base *urlnorm.Base, body string) *extractor {
	e := &extractor{doc: doc, base: base, page: page}
	z := html.NewTokenizer(strings.NewReader(body))
	skip := 0
	inTitle := false
	var title strings.Builder
	var link *linkBuilder
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			e.endLink(link)
			e.title = collapse(title.String())
			return e
		case html.TextToken:
			switch {
			case skip > 0:
			case inTitle:
				title.Write(z.Text())
			default:
				e.text(string(z.Text()), state{link: link})
			}
		case html.StartTagToken, html.SelfClosingTagToken:
			tok := z.Token()
			n := &html.Node{Type: html.ElementNode, Data: tok.Data, DataAtom: tok.DataAtom, Attr: tok.Attr}
			if flatSkipped[tok.DataAtom] && tt == html.StartTagToken {
				skip++
			}
			switch tok.DataAtom {
			case atom.Title:
				inTitle = tt == html.StartTagToken
			case atom.Html:
				e.lang = attr(n, "lang")
			case atom.Meta:
				e.meta(n)
			case atom.A, atom.Area:
				if href, ok := attrOK(n, "href"); ok {
					if lb := e.addLink(n, href, crawl.DestPage, state{}); lb != nil && tok.DataAtom == atom.A && tt == html.StartTagToken {
						e.endLink(link) // links do not nest: an open one ends here
						link = lb
					}
				}
			case atom.Link:
				if href, ok := attrOK(n, "href"); ok {
					e.linkElement(n, href, state{})
				}
			case atom.Iframe, atom.Frame:
				if src, ok := attrOK(n, "src"); ok {
					e.addLink(n, src, crawl.DestEmbed, state{})
				}
			}
			if blockish[tok.DataAtom] {
				e.breakAll()
			}
		case html.EndTagToken:
			tok := z.Token()
			if flatSkipped[tok.DataAtom] {
				skip = max(0, skip-1)
			}
			switch tok.DataAtom {
			case atom.Title:
				inTitle = false
			case atom.A:
				e.endLink(link)
				link = nil
			}
			if blockish[tok.DataAtom] {
				e.breakAll()
			}
		}
	}
}
