package parse

import (
	"strings"
	"unicode"

	"github.com/serverless-crawler/crawler/shared/crawl"
)

// ExtractPlain reads a text/plain body as a document: its text is the
// body's lines (whitespace collapsed, blank lines dropped, as a page's
// text is), its headline the first line that holds a letter or a digit
// (a README's or an RFC's first line names it, more often than not),
// and its language detected from the text unless Content-Language says
// it. It has no title, description or links: a URL written in plain
// text is not followed, as wget and colly do not follow it either.
func ExtractPlain(pageURL, body, contentLanguage string) crawl.Document {
	doc := crawl.Document{URL: pageURL}
	e := &extractor{doc: &doc}
	e.fields[fText] = []byte(body)
	e.finish(contentLanguage)
	if h := firstWordsLine(doc.Text.Text); h != "" {
		doc.Headline = &h
		doc.Indexiness = indexiness(&doc)
	}
	return doc
}

// maxPlainHeadline bounds a plain text's headline, in bytes: a file of
// one long line is not all headline.
const maxPlainHeadline = 200

// firstWordsLine returns the first line of text that holds a letter or
// a digit (a banner of dashes or stars is not a headline), cut to
// maxPlainHeadline bytes at a space when it can be.
func firstWordsLine(text string) string {
	for line := range strings.Lines(text) {
		line = strings.TrimSpace(line)
		if strings.IndexFunc(line, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) < 0 {
			continue
		}
		if len(line) <= maxPlainHeadline {
			return line
		}
		cut := strings.ToValidUTF8(line[:maxPlainHeadline], "")
		if i := strings.LastIndexByte(cut, ' '); i > maxPlainHeadline/2 {
			cut = cut[:i]
		}
		return strings.TrimSpace(cut) + "…"
	}
	return ""
}
