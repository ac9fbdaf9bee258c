package parse

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// The block classifier finds page chrome that is not marked up as such:
// a menu written as a <div> of links, a table of contents, a generated
// index. A block whose text is mostly link text is chrome, wherever it
// sits, as in jusText and trafilatura: content is sentences, chrome is
// names of other pages. The decision is made when the block ends, on the
// text it holds then; a block judged chrome inside it was already moved
// out, so an introduction above a table of contents stays content while
// the table goes (docs/design.md, "Documents").

// LinkDenseShare is the share of a block's letters and digits that must
// be in link text for the block to be page chrome. Separators ("Home |
// About", "A · B · C") are not counted: a bar of one-letter links is
// all links. 0.8 is trafilatura's; 0.5 scored the same in make eval but
// took API prose made mostly of linked names out of the content
// (BENCHMARKS.md, "Search quality").
const LinkDenseShare = 0.8

// judged are the elements the classifier decides on: the containers
// that hold menus, lists of links and tables of them. A list item, and a
// list nested in one, is judged with its list; a link with what holds
// it.
var judged = map[atom.Atom]bool{
	atom.Div: true, atom.Section: true, atom.P: true, atom.Ul: true, atom.Ol: true, atom.Dl: true,
	atom.Menu: true, atom.Table: true, atom.Td: true,
}

// blockMark is where a judged block started: the length of each text
// field, the text counters, the links found so far, what the headline
// reader had seen, and how many links the block needs to be judged.
type blockMark struct {
	pos              [len(extractor{}.fields)]int
	chars, link      int
	links, minLinks  int
	head, removed    int
	h1s              int
	noSub, noSubMain bool
}

// judges reports whether the classifier decides on element n, which is
// in outer and has the state inner: a judged element in the page's
// content (chrome is chrome already), not a list inside a list, and not
// the page's own main landmark, which its author named the content.
func judges(n *html.Node, outer, inner state) bool {
	if !judged[n.DataAtom] || inner.secondary || inner.skip {
		return false
	}
	switch n.DataAtom {
	case atom.Ul, atom.Ol, atom.Dl, atom.Menu:
		if outer.loc.InList {
			return false
		}
	}
	if r, ok := attrOK(n, "role"); ok && strings.EqualFold(strings.TrimSpace(r), "main") {
		return false
	}
	return true
}

// minLinks is how many links a block must hold to be judged: a table
// cell or a paragraph that is one link is a reference table's name
// column or a sentence of its own ("See the tutorial"), content; a
// layout table's column of links or a paragraph of them is chrome.
func minLinks(a atom.Atom) int {
	if a == atom.Td || a == atom.P {
		return 2
	}
	return 1
}

func (e *extractor) mark(a atom.Atom) blockMark {
	m := blockMark{chars: e.chars, link: e.linkChars, links: len(e.doc.Links), minLinks: minLinks(a), head: e.headChars, removed: e.removed, h1s: len(e.h1s), noSub: e.sub == "", noSubMain: e.subMain == ""}
	for i := range e.fields {
		m.pos[i] = len(e.fields[i])
	}
	return m
}

// judge ends the block begun at m. The block is chrome if its text is
// mostly link text, or if blocks in it were chrome and what is left is
// only headings (the title of a list of links). Chrome's text moves to
// the secondary field, and its headings no longer count as the
// content's.
func (e *extractor) judge(m blockMark) {
	chars, link, head := e.chars-m.chars, e.linkChars-m.link, e.headChars-m.head
	switch {
	case chars == 0, len(e.doc.Links)-m.links < m.minLinks && e.removed == m.removed:
		return
	case float64(link) >= LinkDenseShare*float64(chars):
	case head == chars && e.removed > m.removed:
	default:
		return
	}
	sec := &e.fields[fSecondary]
	for i := range e.fields {
		if i == fSecondary || len(e.fields[i]) == m.pos[i] {
			continue
		}
		if n := len(*sec); n > 0 && (*sec)[n-1] != '\n' {
			*sec = append(*sec, '\n')
		}
		*sec = append(*sec, e.fields[i][m.pos[i]:]...)
		e.fields[i] = e.fields[i][:m.pos[i]]
	}
	e.chars, e.linkChars, e.headChars = m.chars, m.link, m.head
	e.removed += chars
	for i := m.h1s; i < len(e.h1s); i++ {
		e.h1s[i].chrome, e.h1s[i].mainish = true, false
	}
	if m.noSub {
		e.sub = ""
	}
	if m.noSubMain {
		e.subMain = ""
	}
}

// wordChars counts the letters and digits in s.
func wordChars(s string) int {
	n := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' {
				n++
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			n++
		}
		i += size
	}
	return n
}
