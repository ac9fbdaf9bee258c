package parse

import (
	"encoding/json"
	"errors"
	"net/url"
	"strings"
	"time"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
	"golang.org/x/net/publicsuffix"
	"golang.org/x/text/language"

	"github.com/serverless-crawler/crawler/shared/crawl"
	"github.com/serverless-crawler/crawler/shared/urlnorm"
)

// Extract reads a document out of an HTML page. pageURL is the page's
// normalized URL; contentLanguage is its Content-Language header.
func Extract(pageURL, body, contentLanguage string) crawl.Document {
	root, err := html.Parse(strings.NewReader(body))
	doc := crawl.Document{URL: pageURL}
	if err != nil { // html.Parse only fails on reader errors
		return doc
	}
	base, _ := url.Parse(pageURL)
	e := &extractor{doc: &doc, base: base, page: base}
	e.walk(root, state{})
	e.finish(contentLanguage)
	return doc
}

// state is what encloses a node: the location signature, which text
// field its text goes to, and whether it is inside a link.
type state struct {
	loc       crawl.Location
	secondary bool // header, footer, nav, aside
	skip      bool // script, style, template, ...
	big       bool // h1, h2
	small     bool // h3..h6
	code      bool // pre, code, kbd, samp
	quote     bool // blockquote, q
	inMainish bool // main or article
	link      *linkBuilder
}

type linkBuilder struct {
	idx  int
	text strings.Builder
}

type extractor struct {
	doc  *crawl.Document
	base *url.URL // <base href> or the page URL
	page *url.URL

	fields    [6]strings.Builder // text, secondary, big, small, code, quote
	title     string
	ogTitle   string
	siteName  string
	h1s       []h1
	desc      string
	ogDesc    string
	lang      string
	published string
	modified  string
	jsonLD    []string
	baseSet   bool
	canonical string
	linkTexts []*linkBuilder
	words     int
}

type h1 struct {
	text    string
	mainish bool
	chrome  bool // in header, nav, footer, aside
}

const (
	fText = iota
	fSecondary
	fBig
	fSmall
	fCode
	fQuote
)

var blockish = map[atom.Atom]bool{
	atom.P: true, atom.Div: true, atom.Li: true, atom.Br: true, atom.Tr: true, atom.Td: true, atom.Th: true,
	atom.H1: true, atom.H2: true, atom.H3: true, atom.H4: true, atom.H5: true, atom.H6: true, atom.Pre: true,
	atom.Blockquote: true, atom.Section: true, atom.Article: true, atom.Header: true, atom.Footer: true,
	atom.Nav: true, atom.Aside: true, atom.Main: true, atom.Ul: true, atom.Ol: true, atom.Dl: true, atom.Dt: true,
	atom.Dd: true, atom.Table: true, atom.Figure: true, atom.Figcaption: true, atom.Address: true, atom.Form: true,
	atom.Hr: true, atom.Title: true, atom.Caption: true,
}

func (e *extractor) walk(n *html.Node, st state) {
	switch n.Type {
	case html.TextNode:
		e.text(n.Data, st)
		return
	case html.ElementNode:
		st = e.element(n, st)
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		e.walk(c, st)
	}
	if n.Type == html.ElementNode && blockish[n.DataAtom] {
		e.breakAll()
	}
}

func (e *extractor) element(n *html.Node, st state) state {
	if st.skip {
		return st
	}
	a := n.DataAtom
	switch a {
	case atom.Script:
		if strings.EqualFold(attr(n, "type"), "application/ld+json") {
			e.jsonLD = append(e.jsonLD, textOf(n))
		}
		st.skip = true
	case atom.Style, atom.Noscript, atom.Template, atom.Svg, atom.Math, atom.Select, atom.Option, atom.Button, atom.Textarea:
		st.skip = true
	case atom.Title:
		if e.title == "" && !st.loc.InHeader {
			e.title = collapse(textOf(n))
		}
		st.skip = true
	case atom.Html:
		e.lang = attr(n, "lang")
		if e.lang == "" {
			e.lang = attr(n, "xml:lang")
		}
	case atom.Base:
		if href := attr(n, "href"); href != "" && !e.baseSet {
			if b, err := e.page.Parse(strings.TrimSpace(href)); err == nil {
				e.base, e.baseSet = b, true
			}
		}
	case atom.Meta:
		e.meta(n)
	case atom.Header:
		st.loc.InHeader, st.secondary = true, true
	case atom.Footer:
		st.loc.InFooter, st.secondary = true, true
	case atom.Aside:
		st.loc.InAside, st.secondary = true, true
	case atom.Nav:
		st.loc.InNav, st.secondary = true, true
	case atom.Form:
		st.loc.InForm = true
	case atom.Main:
		st.loc.InMain, st.inMainish = true, true
	case atom.Article:
		st.loc.InArticle, st.inMainish = true, true
	case atom.Section:
		st.loc.InSection = true
	case atom.Table:
		st.loc.InTable = true
	case atom.Figure:
		st.loc.InFigure = true
	case atom.Address:
		st.loc.InAddress = true
	case atom.Pre, atom.Code, atom.Kbd, atom.Samp:
		st.loc.InCode, st.code = true, true
	case atom.Blockquote, atom.Q:
		st.quote = true
	case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
		st.loc.InHeadline = true
		if a == atom.H1 || a == atom.H2 {
			st.big = true
		} else {
			st.small = true
		}
		if a == atom.H1 {
			e.h1s = append(e.h1s, h1{text: collapse(textOf(n)), mainish: st.inMainish, chrome: st.secondary})
		}
		if st.link != nil {
			e.doc.Links[st.link.idx].ContainsHeadline = true
		}
	case atom.Ul, atom.Ol, atom.Dl, atom.Li:
		st.loc.InList = true
	case atom.P:
		st.loc.InParagraph = true
	}
	switch a {
	case atom.A, atom.Area:
		if href, ok := attrOK(n, "href"); ok {
			if lb := e.addLink(n, href, crawl.DestPage, st); lb != nil && a == atom.A {
				st.link = lb
			}
		}
	case atom.Link:
		if href, ok := attrOK(n, "href"); ok {
			e.linkElement(n, href, st)
		}
	case atom.Iframe, atom.Frame:
		if src, ok := attrOK(n, "src"); ok {
			e.addLink(n, src, crawl.DestEmbed, st)
		}
	}
	return st
}

func (e *extractor) meta(n *html.Node) {
	name := strings.ToLower(attr(n, "name"))
	prop := strings.ToLower(attr(n, "property"))
	content := strings.TrimSpace(attr(n, "content"))
	switch {
	case name == "description" && e.desc == "":
		e.desc = collapse(content)
	case prop == "og:description" && e.ogDesc == "":
		e.ogDesc = collapse(content)
	case prop == "og:title" && e.ogTitle == "":
		e.ogTitle = collapse(content)
	case prop == "og:site_name":
		e.siteName = collapse(content)
	case name == "robots":
		for _, d := range strings.Split(strings.ToLower(content), ",") {
			switch strings.TrimSpace(d) {
			case "nofollow":
				e.doc.NoFollow = true
			case "noindex":
				e.doc.NoIndex = true
			case "none":
				e.doc.NoFollow, e.doc.NoIndex = true, true
			}
		}
	case prop == "article:published_time" || name == "date" || name == "dcterms.created" || name == "dc.date.created":
		if e.published == "" {
			e.published = content
		}
	case prop == "article:modified_time" || prop == "og:updated_time" || name == "last-modified" || name == "dcterms.modified":
		if e.modified == "" {
			e.modified = content
		}
	}
	if strings.EqualFold(attr(n, "http-equiv"), "content-language") && e.lang == "" {
		e.lang = content
	}
}

func (e *extractor) linkElement(n *html.Node, href string, st state) {
	rels := strings.Fields(strings.ToLower(attr(n, "rel")))
	dest := crawl.DestOther
	for _, r := range rels {
		switch r {
		case "canonical":
			dest = crawl.DestCanonical
		case "alternate":
			t := strings.ToLower(attr(n, "type"))
			if strings.Contains(t, "rss") || strings.Contains(t, "atom") {
				dest = crawl.DestFeed
			} else if dest != crawl.DestCanonical {
				dest = crawl.DestAlternate
			}
		case "stylesheet":
			if dest == crawl.DestOther {
				dest = crawl.DestStylesheet
			}
		}
	}
	lb := e.addLink(n, href, dest, st)
	if dest == crawl.DestCanonical && lb != nil && e.canonical == "" {
		e.canonical = e.doc.Links[lb.idx].URL
	}
}

// addLink records a link; it returns nil for one that is not an http(s) URL.
func (e *extractor) addLink(n *html.Node, href string, dest crawl.DestinationType, st state) *linkBuilder {
	r, err := urlnorm.Resolve(e.base, href)
	if errors.Is(err, urlnorm.ErrUnsupportedScheme) {
		return nil // mailto:, javascript:, tel:: not a crawl target
	}
	if err != nil {
		e.doc.InvalidLinks = append(e.doc.InvalidLinks, strings.TrimSpace(href))
		return nil
	}
	rels := " " + strings.ToLower(attr(n, "rel")) + " "
	l := crawl.Link{
		URL:             r.URL,
		RelNofollow:     strings.Contains(rels, " nofollow ") || strings.Contains(rels, " sponsored ") || strings.Contains(rels, " ugc "),
		RelMe:           strings.Contains(rels, " me "),
		RelTag:          strings.Contains(rels, " tag "),
		Location:        st.loc,
		DestinationType: dest,
		TagName:         n.Data,
		Locality:        e.locality(r),
	}
	if r.HasFrag {
		f := r.Fragment
		l.Fragment = &f
	}
	switch n.DataAtom {
	case atom.Area:
		if t := collapse(attr(n, "alt")); t != "" {
			l.Text = &t
		}
	case atom.Iframe, atom.Frame, atom.Link:
		if t := collapse(attr(n, "title")); t != "" {
			l.Text = &t
		}
	}
	e.doc.Links = append(e.doc.Links, l)
	lb := &linkBuilder{idx: len(e.doc.Links) - 1}
	if n.DataAtom == atom.A {
		e.linkTexts = append(e.linkTexts, lb)
	}
	return lb
}

func (e *extractor) locality(r urlnorm.Result) crawl.Locality {
	page := e.doc.URL
	if r.URL == page {
		return crawl.LocalitySameDocument
	}
	host := strings.ToLower(e.page.Host)
	if r.Host == host {
		return crawl.LocalitySameHost
	}
	a, err1 := publicsuffix.EffectiveTLDPlusOne(hostname(r.Host))
	b, err2 := publicsuffix.EffectiveTLDPlusOne(hostname(host))
	if err1 == nil && err2 == nil && a == b {
		return crawl.LocalitySameSite
	}
	return crawl.LocalityExternal
}

func hostname(hostport string) string {
	u := url.URL{Host: hostport}
	return u.Hostname()
}

func (e *extractor) text(s string, st state) {
	if st.skip {
		return
	}
	if st.link != nil {
		st.link.text.WriteString(s)
	}
	f := fText
	switch {
	case st.secondary:
		f = fSecondary
	case st.big:
		f = fBig
	case st.small:
		f = fSmall
	case st.code:
		f = fCode
	case st.quote:
		f = fQuote
	}
	e.fields[f].WriteString(s) // whitespace is normalized in finish
}

// breakAll ends the current line in every field (a block element ended).
func (e *extractor) breakAll() {
	for i := range e.fields {
		b := &e.fields[i]
		if b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
			b.WriteByte('\n')
		}
	}
}

func (e *extractor) finish(contentLanguage string) {
	d := e.doc
	p := &d.Text
	p.Text = normalizeBlock(e.fields[fText].String())
	p.SecondaryText = normalizeBlock(e.fields[fSecondary].String())
	p.BigHeadlines = normalizeBlock(e.fields[fBig].String())
	p.SmallHeadlines = normalizeBlock(e.fields[fSmall].String())
	p.CodeText = normalizeCode(e.fields[fCode].String())
	p.QuoteText = normalizeBlock(e.fields[fQuote].String())
	p.Digest = p.ComputeDigest()

	for _, lb := range e.linkTexts {
		if t := collapse(lb.text.String()); t != "" {
			d.Links[lb.idx].Text = &t
		}
	}
	if e.title != "" {
		d.Title = &e.title
	} else if e.ogTitle != "" {
		d.Title = &e.ogTitle
	}
	if h := e.headline(); h != "" {
		d.Headline = &h
	}
	if e.desc != "" {
		d.Description = &e.desc
	} else if e.ogDesc != "" {
		d.Description = &e.ogDesc
	}
	if l := languageTag(e.lang); l != "" {
		d.Language = &l
	} else if l := languageTag(strings.Split(contentLanguage, ",")[0]); l != "" {
		d.Language = &l
	}
	e.times()
	if e.canonical != "" && e.canonical != d.URL {
		d.CanonicalURL = &e.canonical
	}
	d.Indexiness = indexiness(d)
}

// headline picks the main h1: the first in main or article, else the
// first outside page chrome, else the first; never the site name.
func (e *extractor) headline() string {
	pick := func(ok func(h1) bool) string {
		for _, h := range e.h1s {
			if h.text != "" && ok(h) && !strings.EqualFold(h.text, e.siteName) {
				return h.text
			}
		}
		return ""
	}
	if h := pick(func(h h1) bool { return h.mainish }); h != "" {
		return h
	}
	if h := pick(func(h h1) bool { return !h.chrome }); h != "" {
		return h
	}
	return pick(func(h1) bool { return true })
}

func (e *extractor) times() {
	pub, mod := e.published, e.modified
	for _, raw := range e.jsonLD {
		p, m := jsonLDDates(raw)
		if pub == "" {
			pub = p
		}
		if mod == "" {
			mod = m
		}
	}
	if t, ok := parseTime(pub); ok {
		e.doc.TimeCreated = &t
	}
	if t, ok := parseTime(mod); ok {
		e.doc.TimeUpdated = &t
	}
}

// jsonLDDates finds datePublished/dateModified in a JSON-LD block (an
// object, an array of them, or an @graph).
func jsonLDDates(raw string) (published, modified string) {
	var v any
	if json.Unmarshal([]byte(raw), &v) != nil {
		return "", ""
	}
	var visit func(any)
	visit = func(v any) {
		switch x := v.(type) {
		case []any:
			for _, i := range x {
				visit(i)
			}
		case map[string]any:
			if s, ok := x["datePublished"].(string); ok && published == "" {
				published = s
			}
			if s, ok := x["dateModified"].(string); ok && modified == "" {
				modified = s
			}
			if g, ok := x["@graph"]; ok {
				visit(g)
			}
		}
	}
	visit(v)
	return published, modified
}

func parseTime(s string) (int64, bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, false
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05Z0700", "2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02", time.RFC1123, time.RFC1123Z} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.Unix(), true
		}
	}
	return 0, false
}

// languageTag reduces a language tag to its IANA primary language subtag
// ("en-US" -> "en"), or "" when it is not a valid tag.
func languageTag(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	t, err := language.Parse(s)
	if err != nil {
		return ""
	}
	b, conf := t.Base()
	if conf == language.No || b.String() == "und" {
		return ""
	}
	return b.String()
}

// indexiness scores, from 0 to 100, how much a page is worth returning
// from search: 0 for noindex; otherwise points for a title (20), a main
// headline (15), a description (15), and for the amount of main text (up
// to 50, full marks at 500 words). Pages that are mostly navigation score low.
func indexiness(d *crawl.Document) int {
	if d.NoIndex {
		return 0
	}
	score := 0
	if d.Title != nil {
		score += 20
	}
	if d.Headline != nil {
		score += 15
	}
	if d.Description != nil {
		score += 15
	}
	words := len(strings.Fields(d.Text.Text))
	score += min(50, words/10)
	return score
}

func attr(n *html.Node, key string) string {
	v, _ := attrOK(n, key)
	return v
}

func attrOK(n *html.Node, key string) (string, bool) {
	for _, a := range n.Attr {
		if a.Namespace == "" && strings.EqualFold(a.Key, key) {
			return a.Val, true
		}
	}
	return "", false
}

func textOf(n *html.Node) string {
	var b strings.Builder
	var f func(*html.Node)
	f = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
			b.WriteByte(' ')
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			f(c)
		}
	}
	f(n)
	return b.String()
}

// collapse turns every run of whitespace into one space and trims.
func collapse(s string) string { return strings.Join(strings.Fields(s), " ") }

// normalizeBlock collapses whitespace within lines and drops empty lines.
func normalizeBlock(s string) string {
	lines := strings.Split(s, "\n")
	out := lines[:0]
	for _, l := range lines {
		if l = collapse(l); l != "" {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// normalizeCode keeps code's line structure: trailing space trimmed,
// runs of blank lines dropped.
func normalizeCode(s string) string {
	lines := strings.Split(s, "\n")
	out := lines[:0]
	for _, l := range lines {
		l = strings.TrimRight(l, " \t\r")
		if strings.TrimSpace(l) == "" {
			continue
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}
