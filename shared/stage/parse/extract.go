package parse

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
	"unicode"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
	"golang.org/x/net/publicsuffix"

	"github.com/serverless-crawler/crawler/shared/crawl"
	"github.com/serverless-crawler/crawler/shared/web/urlnorm"
)

// Extract reads a document out of an HTML page. pageURL is the page's
// normalized URL; contentLanguage is its Content-Language header.
func Extract(pageURL, body, contentLanguage string) crawl.Document {
	doc := crawl.Document{URL: pageURL}
	page, _ := url.Parse(pageURL)
	pageBase, _ := urlnorm.NewBase(pageURL) // nil: links resolve only if absolute
	if len(body) > MaxTreeSize {
		// The tree of a page costs about eight times its size: a huge
		// page is read as a stream, so that memory stays a small
		// multiple of the bodies in flight (docs/limits.md).
		e := extractFlat(&doc, page, pageBase, body)
		e.finish(contentLanguage)
		doc.Warnings = append(doc.Warnings, fmt.Sprintf("page over %d MiB: text and links read flat, without location flags or text kinds", MaxTreeSize>>20))
		return doc
	}
	root, err := html.Parse(strings.NewReader(body))
	if err != nil {
		// html.Parse refuses documents nested deeper than 512 elements.
		// Their text and links are still read, flat.
		e := extractFlat(&doc, page, pageBase, body)
		e.finish(contentLanguage)
		doc.Warnings = append(doc.Warnings, fmt.Sprintf("HTML tree not built (%v): text and links read flat, without location flags or text kinds", err))
		return doc
	}
	base, hasMain := prescan(root, pageBase)
	e := &extractor{doc: &doc, base: base, page: page}
	// A page that marks its main content (<main>, role="main") says that
	// the rest is not: its text outside main is secondary (chrome).
	e.walk(root, state{secondary: hasMain})
	e.finish(contentLanguage)
	return doc
}

// MaxTreeSize is the largest page (decoded, in bytes) read as an HTML
// tree; a larger one is read as a stream of tokens.
const MaxTreeSize = 4 << 20

// state is what encloses a node: the location signature, which text
// field its text goes to, and whether it is inside a link.
type state struct {
	loc       crawl.Location
	secondary bool // header, footer, nav, aside
	skip      bool // script, style, template, ...
	big       bool // h1, h2
	small     bool // h3..h6
	code      bool // pre, code, kbd, samp
	pre       bool // pre: whitespace is kept
	quote     bool // blockquote, q
	inMainish bool // main or article
	link      *linkBuilder
}

// linkBuilder gathers the text of the link being read; it lives only
// while the reader is inside the link.
type linkBuilder struct {
	idx  int
	text strings.Builder
}

type extractor struct {
	doc      *crawl.Document
	base     *urlnorm.Base // <base href> or the page URL; nil if neither parses
	page     *url.URL
	resolved map[string]*resolution    // see resolve
	hosts    map[string]crawl.Locality // a link host's locality, see locality
	texts    map[string]*string        // short link texts, shared (see intern)

	fields    [6][]byte // text, secondary, big, small, code, quote
	chars     int       // letters and digits in the content fields (not secondary), see blocks.go
	linkChars int       // of which link text
	headChars int       // of which headings
	removed   int       // letters and digits the block classifier moved to secondary
	title     string
	ogTitle   string
	siteName  string
	h1s       []h1
	desc      string
	ogDesc    string
	dcTitle   string
	dcDesc    string
	subMain   string // the first h2-h6 in main or article, outside chrome
	sub       string // the first h2-h6 outside chrome
	lang      string
	published string
	modified  string
	jsonLD    []string
	canonical string
	words     int
	holders   map[*html.Node]bool // the elements that hold an h1, main landmark or article, see holdsContent
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
	atom.Hr: true, atom.Title: true, atom.Caption: true, atom.Details: true, atom.Summary: true,
	atom.Fieldset: true, atom.Legend: true, atom.Hgroup: true, atom.Menu: true, atom.Dialog: true,
}

// prescan reads what the walk must know before it starts, in one pass
// over the tree: the document's base URL (the first <base href>
// wherever it sits, resolved against the page URL: HTML's "frozen base
// URL"; else the page URL), and whether the page has a main landmark
// (<main> or role="main", outside script and template content).
func prescan(root *html.Node, page *urlnorm.Base) (base *urlnorm.Base, hasMain bool) {
	baseSeen := page == nil // nothing to resolve against: no base to look for
	var find func(*html.Node, int)
	find = func(n *html.Node, depth int) {
		for c := n.FirstChild; c != nil && !(baseSeen && hasMain); c = c.NextSibling {
			if c.Type != html.ElementNode {
				continue
			}
			switch c.DataAtom {
			case atom.Base:
				if href, ok := attrOK(c, "href"); ok && !baseSeen {
					baseSeen = true // only the first <base href> counts
					// Resolve refuses what is not http(s).
					if r, err := page.Resolve(href); err == nil {
						base, _ = urlnorm.NewBase(r.URL)
					}
				}
			case atom.Main:
				hasMain = true
			case atom.Script, atom.Template, atom.Style:
				continue
			}
			if r, ok := attrOK(c, "role"); ok && strings.EqualFold(strings.TrimSpace(r), "main") {
				hasMain = true
			}
			if depth < 600 {
				find(c, depth+1)
			}
		}
	}
	find(root, 0)
	if base == nil {
		base = page
	}
	return base, hasMain
}

func (e *extractor) walk(n *html.Node, st state) {
	switch n.Type {
	case html.TextNode:
		e.text(n.Data, st)
		return
	case html.ElementNode:
		block := blockish[n.DataAtom]
		if block {
			e.breakAll()
		}
		inner := e.element(n, st)
		judge := judges(n, st, inner)
		var m blockMark
		if judge {
			m = e.mark(n.DataAtom)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			e.walk(c, inner)
		}
		if inner.link != st.link {
			e.endLink(inner.link)
		}
		switch f := inner.field(); {
		case block:
			e.breakAll()
		case f != st.field() && !inner.skip:
			// An inline element with a field of its own (<code>, <q>)
			// ended: its text is not run together with the next one's.
			e.endLine(f)
		}
		if judge {
			e.judge(m)
		}
		return
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		e.walk(c, st)
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
			e.jsonLD = append(e.jsonLD, textOf(n, 1<<20))
		}
		st.skip = true
	case atom.Style, atom.Noscript, atom.Template, atom.Svg, atom.Math, atom.Select, atom.Option, atom.Button, atom.Textarea:
		st.skip = true
	case atom.Title:
		if e.title == "" && !st.loc.InHeader {
			e.title = collapse(textOf(n, maxField))
		}
		st.skip = true
	case atom.Html:
		e.lang = attr(n, "lang")
		if e.lang == "" {
			e.lang = attr(n, "xml:lang")
		}
	case atom.Meta:
		e.meta(n)
	case atom.Header:
		// A header or footer inside main or article belongs to it (an
		// article's title and byline): its text is not page chrome.
		st.loc.InHeader = true
		st.secondary = st.secondary || !st.inMainish
	case atom.Footer:
		st.loc.InFooter = true
		st.secondary = st.secondary || !st.inMainish
	case atom.Aside:
		st.loc.InAside, st.secondary = true, true
	case atom.Nav:
		st.loc.InNav, st.secondary = true, true
	case atom.Form:
		st.loc.InForm = true
	case atom.Main:
		st = st.enterMain()
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
	case atom.Pre:
		st.loc.InCode, st.code, st.pre = true, true, true
	case atom.Code, atom.Kbd, atom.Samp:
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
		// Bounded: nested headings must not copy the document per level.
		switch {
		case a == atom.H1:
			e.h1s = append(e.h1s, h1{text: collapse(textOf(n, maxField)), mainish: st.inMainish, chrome: st.secondary})
		case !st.secondary && (e.sub == "" || st.inMainish && e.subMain == ""):
			t := collapse(textOf(n, maxField))
			if e.sub == "" {
				e.sub = t
			}
			if st.inMainish && e.subMain == "" {
				e.subMain = t
			}
		}
		if st.link != nil {
			e.doc.Links[st.link.idx].ContainsHeadline = true
		}
	case atom.Ul, atom.Ol, atom.Dl, atom.Li:
		st.loc.InList = true
	case atom.P:
		st.loc.InParagraph = true
	case atom.Img:
		if st.link != nil { // an image link is named by its alt text
			st.link.text.WriteString(" " + attr(n, "alt") + " ")
		}
	}
	if !st.secondary && e.chromeName(n) {
		st.secondary = true
	}
	// ARIA landmark roles mark the same regions on any element (a
	// <div role="navigation">): they count as the element would.
	if role, ok := attrOK(n, "role"); ok {
		switch strings.ToLower(strings.TrimSpace(role)) {
		case "main":
			st = st.enterMain()
		case "navigation", "search":
			st.loc.InNav, st.secondary = true, true
		case "banner":
			st.loc.InHeader = true
			st.secondary = st.secondary || !st.inMainish
		case "contentinfo":
			st.loc.InFooter = true
			st.secondary = st.secondary || !st.inMainish
		case "complementary":
			st.loc.InAside, st.secondary = true, true
		}
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

// enterMain is the state inside <main> or role="main": main content,
// not chrome, unless a nav or aside around it said otherwise.
func (st state) enterMain() state {
	st.loc.InMain, st.inMainish = true, true
	if !st.loc.InNav && !st.loc.InAside {
		st.secondary = false
	}
	return st
}

// maxField bounds the text kept of a title, a heading or a meta field:
// the page decides their length, and the AWS home keeps them in one item
// of at most 400 KB.
const maxField = 4 << 10

// metaText is a meta field's content, collapsed, its head if longer
// than maxField.
func metaText(content string) string { return collapse(crawl.Truncate(content, maxField)) }

func (e *extractor) meta(n *html.Node) {
	name := strings.ToLower(attr(n, "name"))
	prop := strings.ToLower(attr(n, "property"))
	content := strings.TrimSpace(attr(n, "content"))
	switch {
	case name == "description" && e.desc == "":
		e.desc = metaText(content)
	case prop == "og:description" && e.ogDesc == "":
		e.ogDesc = metaText(content)
	case prop == "og:title" && e.ogTitle == "":
		e.ogTitle = metaText(content)
	case prop == "og:site_name":
		e.siteName = metaText(content)
	case (name == "dc.title" || name == "dcterms.title") && e.dcTitle == "":
		e.dcTitle = metaText(content)
	case (name == "dc.description" || name == "dcterms.description") && e.dcDesc == "":
		e.dcDesc = metaText(content)
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
	rels := " " + strings.Join(strings.Fields(strings.ToLower(attr(n, "rel"))), " ") + " "
	t := strings.ToLower(attr(n, "type"))
	dest := crawl.DestOther
	switch {
	case strings.Contains(rels, " canonical "):
		dest = crawl.DestCanonical
	case strings.Contains(rels, " stylesheet "): // "alternate stylesheet" too
		dest = crawl.DestStylesheet
	case strings.Contains(rels, " alternate ") && (strings.Contains(t, "rss") || strings.Contains(t, "atom")):
		dest = crawl.DestFeed
	case strings.Contains(rels, " alternate "):
		dest = crawl.DestAlternate
	case navigational(rels) && !strings.Contains(t, "opensearch"):
		dest = crawl.DestNavigation
	}
	lb := e.addLink(n, href, dest, st)
	// A canonical URL longer than any candidate's names no page crawled.
	if dest == crawl.DestCanonical && lb != nil && e.canonical == "" && len(e.doc.Links[lb.idx].URL) <= crawl.MaxKeptURLLength {
		e.canonical = e.doc.Links[lb.idx].URL
	}
}

// navigationRels are the <link> types that name another page of the
// site to move to: the HTML standard's hyperlink types (next, prev,
// search, help, license, author) and those HTML 4 and documentation
// generators use (Sphinx's index and search pages are named only so).
// A search page described for browsers (type opensearchdescription+xml)
// is not one.
var navigationRels = []string{"next", "prev", "previous", "first", "last", "up", "start", "index", "contents", "toc",
	"glossary", "search", "help", "license", "author", "chapter", "section", "subsection", "appendix", "copyright", "home"}

// navigational reports whether rels (space-padded, lower case) holds a
// navigation type.
func navigational(rels string) bool {
	for _, r := range navigationRels {
		if strings.Contains(rels, " "+r+" ") {
			return true
		}
	}
	return false
}

// addLink records a link; it returns nil for one that is not an http(s) URL.
func (e *extractor) addLink(n *html.Node, href string, dest crawl.DestinationType, st state) *linkBuilder {
	res := e.resolve(href)
	if errors.Is(res.err, urlnorm.ErrUnsupportedScheme) {
		return nil // mailto:, javascript:, tel:: not a crawl target
	}
	if res.err != nil {
		e.doc.InvalidLinks = append(e.doc.InvalidLinks, strings.TrimSpace(href))
		return nil
	}
	l := crawl.Link{
		URL:             res.r.URL,
		Fragment:        res.frag,
		Location:        st.loc,
		DestinationType: dest,
		TagName:         n.Data,
		Locality:        e.locality(res.r),
	}
	if rel := attr(n, "rel"); rel != "" {
		rels := " " + strings.Join(strings.Fields(strings.ToLower(rel)), " ") + " "
		l.RelNofollow = strings.Contains(rels, " nofollow ") || strings.Contains(rels, " sponsored ") || strings.Contains(rels, " ugc ")
		l.RelMe = strings.Contains(rels, " me ")
		l.RelTag = strings.Contains(rels, " tag ")
	}
	switch n.DataAtom {
	case atom.Area:
		l.Text = e.intern(collapse(attr(n, "alt")))
	case atom.Iframe, atom.Frame, atom.Link:
		l.Text = e.intern(collapse(attr(n, "title")))
	}
	e.doc.Links = append(e.doc.Links, l)
	return &linkBuilder{idx: len(e.doc.Links) - 1}
}

// endLink sets the text of the link lb gathered (nil: none).
func (e *extractor) endLink(lb *linkBuilder) {
	if lb == nil {
		return
	}
	e.doc.Links[lb.idx].Text = e.intern(collapse(lb.text.String()))
	lb.text.Reset()
}

// intern returns a pointer to s ("" gives nil), the same pointer for the
// same short text on one page: navigation repeats the same link texts
// hundreds of times, and a huge page's links must not each cost one.
func (e *extractor) intern(s string) *string {
	if s == "" {
		return nil
	}
	if len(s) > 64 {
		return &s
	}
	if p, ok := e.texts[s]; ok {
		return p
	}
	if e.texts == nil {
		e.texts = map[string]*string{}
	}
	e.texts[s] = &s
	return &s
}

// resolution is a resolved href, with its fragment's pointer shared by
// every link to it.
type resolution struct {
	r    urlnorm.Result
	frag *string
	err  error
}

// resolve resolves href against the page's base, once per distinct href:
// a page names the same target many times (two links in five, in the
// Python documentation), and resolving is a fair part of extracting.
func (e *extractor) resolve(href string) *resolution {
	if res, ok := e.resolved[href]; ok {
		return res
	}
	r, err := e.base.Resolve(href)
	res := &resolution{r: r, err: err}
	if r.HasFrag {
		f := r.Fragment
		res.frag = &f
	}
	if e.resolved == nil {
		e.resolved = map[string]*resolution{}
	}
	e.resolved[href] = res
	return res
}

func (e *extractor) locality(r urlnorm.Result) crawl.Locality {
	if r.URL == e.doc.URL {
		return crawl.LocalitySameDocument
	}
	if l, ok := e.hosts[r.Host]; ok {
		return l
	}
	l := crawl.LocalityExternal
	host := strings.ToLower(e.page.Host)
	if r.Host == host {
		l = crawl.LocalitySameHost
	} else {
		// EffectiveTLDPlusOne fails for IP addresses and names without a
		// registrable domain (localhost, a bare public suffix): no site.
		a, err1 := publicsuffix.EffectiveTLDPlusOne(hostname(r.Host))
		b, err2 := publicsuffix.EffectiveTLDPlusOne(hostname(host))
		if err1 == nil && err2 == nil && a == b {
			l = crawl.LocalitySameSite
		}
	}
	if e.hosts == nil {
		e.hosts = map[string]crawl.Locality{}
	}
	e.hosts[r.Host] = l
	return l
}

func hostname(hostport string) string {
	u := url.URL{Host: hostport}
	return u.Hostname()
}

func (e *extractor) text(s string, st state) {
	if st.skip {
		return
	}
	if !st.pre {
		// Outside <pre>, a line break in the source is just a space:
		// only block elements end lines.
		s = spaceRuns(s)
	}
	if st.link != nil {
		st.link.text.WriteString(s)
	}
	f := st.field()
	if f != fSecondary {
		n := wordChars(s)
		e.chars += n
		if st.link != nil {
			e.linkChars += n
		}
		if f == fBig || f == fSmall {
			e.headChars += n
		}
	}
	e.fields[f] = append(e.fields[f], s...) // whitespace is normalized in finish
}

// field returns which text pile field text in this state goes to.
func (st state) field() int {
	switch {
	case st.secondary:
		return fSecondary
	case st.big:
		return fBig
	case st.small:
		return fSmall
	case st.code:
		return fCode
	case st.quote:
		return fQuote
	}
	return fText
}

// spaceRuns turns every run of HTML whitespace into one space.
func spaceRuns(s string) string {
	if !hasSpaceRun(s) {
		return s // most text nodes: nothing to copy
	}
	var b strings.Builder
	space := false
	for _, r := range s {
		if r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '\f' {
			space = true
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
	}
	if space {
		b.WriteByte(' ')
	}
	return b.String()
}

// hasSpaceRun reports whether s has HTML whitespace other than single
// spaces.
func hasSpaceRun(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\t', '\n', '\r', '\f':
			return true
		case ' ':
			if i+1 < len(s) && s[i+1] == ' ' {
				return true
			}
		}
	}
	return false
}

// breakAll ends the current line in every field (a block element
// started or ended).
func (e *extractor) breakAll() {
	for i := range e.fields {
		e.endLine(i)
	}
}

// endLine ends the current line of one field.
func (e *extractor) endLine(f int) {
	if b := e.fields[f]; len(b) > 0 && b[len(b)-1] != '\n' {
		e.fields[f] = append(b, '\n')
	}
}

func (e *extractor) finish(contentLanguage string) {
	d := e.doc
	p := &d.Text
	p.Text = normalizeBlock(string(e.fields[fText]))
	p.SecondaryText = normalizeBlock(string(e.fields[fSecondary]))
	p.BigHeadlines = normalizeBlock(string(e.fields[fBig]))
	p.SmallHeadlines = normalizeBlock(string(e.fields[fSmall]))
	p.CodeText = normalizeCode(string(e.fields[fCode]))
	p.QuoteText = normalizeBlock(string(e.fields[fQuote]))
	p.Digest = p.ComputeDigest()

	if e.title != "" {
		d.Title = &e.title
	} else if e.ogTitle != "" {
		d.Title = &e.ogTitle
	}
	if h := e.headline(); h != "" {
		d.Headline = &h
	}
	if desc := cmp.Or(e.desc, e.ogDesc, e.dcDesc); desc != "" {
		d.Description = &desc
	}
	if l := e.language(contentLanguage); l != "" {
		d.Language = &l
	}
	e.times()
	if e.canonical != "" && e.canonical != d.URL {
		d.CanonicalURL = &e.canonical
	}
	d.Indexiness = indexiness(d)
}

// headline picks the document's main headline from the best source
// present: the first h1 in main or article, else the first h1 outside
// page chrome; else the first heading of another level in main or
// article, else outside chrome; else og:title, else Dublin Core's title,
// else the title; else an h1 in page chrome (a banner's). Never the site
// name (og:site_name).
func (e *extractor) headline() string {
	notSite := func(t string) string {
		if strings.EqualFold(t, e.siteName) {
			return ""
		}
		return t
	}
	pick := func(ok func(h1) bool) string {
		for _, h := range e.h1s {
			if h.text != "" && ok(h) && notSite(h.text) != "" {
				return h.text
			}
		}
		return ""
	}
	return cmp.Or(
		pick(func(h h1) bool { return h.mainish }),
		pick(func(h h1) bool { return !h.chrome }),
		notSite(e.subMain), notSite(e.sub), notSite(e.ogTitle), notSite(e.dcTitle), notSite(e.title),
		pick(func(h1) bool { return true }),
	)
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
	if d.Headline != nil && (d.Title == nil || *d.Headline != *d.Title) {
		score += 15 // a headline of its own: not the title standing in
	}
	if d.Description != nil {
		score += 15
	}
	words := 0
	for range strings.FieldsSeq(d.Text.Text) {
		if words++; words >= 500 {
			break // the score counts 500 words at most
		}
	}
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

// textOf returns the text under n, reading at most about limit bytes.
func textOf(n *html.Node, limit int) string {
	var b strings.Builder
	var f func(*html.Node)
	f = func(n *html.Node) {
		if b.Len() >= limit {
			return
		}
		if n.Type == html.TextNode {
			b.WriteString(n.Data[:min(len(n.Data), limit-b.Len())])
			b.WriteByte(' ')
		}
		for c := n.FirstChild; c != nil && b.Len() < limit; c = c.NextSibling {
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

// chromeWords are the class and id words that name page chrome:
// navigation bars and blocks (DocBook's HTML has "navheader" and
// "navfooter" tables above and below every page), menus, breadcrumbs,
// footers, sidebars and pagers. Readability and trafilatura read such
// names too. Whole words only: Sphinx's "menuselection" is a menu path
// in the text. "header" is not among them: a blog's "entry-header"
// holds its article's title.
var chromeWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`nav navbar navigation navheader navfooter navlinks navmenu menu menubar
		breadcrumb breadcrumbs footer sidebar pagination pager`) {
		chromeWords[w] = true
	}
}

// chromeNamed are the elements a class or id can name as chrome:
// blocks, not the page's body or its inline text.
var chromeNamed = map[atom.Atom]bool{atom.Div: true, atom.Section: true, atom.Ul: true, atom.Ol: true, atom.Table: true}

// chromeName reports whether n is a block whose class or id names page
// chrome (one of its words, split at anything but letters and digits,
// is a chromeWords entry) and that holds no h1, main landmark or
// article: a wrapper named "has-sidebar" around the page's content is
// not chrome.
func (e *extractor) chromeName(n *html.Node) bool {
	if !chromeNamed[n.DataAtom] {
		return false
	}
	for _, key := range []string{"class", "id"} {
		v, _ := attrOK(n, key)
		for w := range strings.FieldsFuncSeq(v, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
			if chromeWords[strings.ToLower(w)] {
				return !e.holdsContent(n)
			}
		}
	}
	return false
}

// holdsContent reports whether n holds an h1, a main landmark or an
// article. The holders are found once a page, on the first question, in
// one pass over the document, each content element marking its
// ancestors: asking for every named block of a page of nested ones
// costs no more.
func (e *extractor) holdsContent(n *html.Node) bool {
	if e.holders == nil {
		e.holders = map[*html.Node]bool{}
		root := n
		for root.Parent != nil {
			root = root.Parent
		}
		for stack := []*html.Node{root}; len(stack) > 0; {
			c := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if c.Type == html.ElementNode && c != root && holdsItself(c) {
				for p := c.Parent; p != nil && !e.holders[p]; p = p.Parent {
					e.holders[p] = true
				}
			}
			for k := c.FirstChild; k != nil; k = k.NextSibling {
				stack = append(stack, k)
			}
		}
	}
	return e.holders[n]
}

// holdsItself reports whether element n is an h1, a main landmark or an
// article.
func holdsItself(n *html.Node) bool {
	switch n.DataAtom {
	case atom.H1, atom.Main, atom.Article:
		return true
	}
	r, ok := attrOK(n, "role")
	return ok && strings.EqualFold(strings.TrimSpace(r), "main")
}
