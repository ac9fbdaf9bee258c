package parse

import (
	"strings"

	"github.com/serverless-crawler/crawler/shared/crawl"
)

// ExtractPlain reads a text/plain body as a document: its text is the
// body's lines (whitespace collapsed, blank lines dropped, as a page's
// text is; control characters are spaces), its headline the first line
// that holds a letter or a digit (a README's first line names it, more
// often than not), cut at the last space before maxPlainHeadline bytes
// (or at a character there) with "…", and its language detected from
// the text unless Content-Language says it. It has no title,
// description or links: a URL written in plain text is not followed, as
// wget and colly do not follow it either.
func ExtractPlain(pageURL, body, contentLanguage string) crawl.Document {
	doc := crawl.Document{URL: pageURL}
	e := &extractor{doc: &doc}
	e.fields[fText] = plainLines(body)
	e.finish(contentLanguage)
	if h := firstWordsLine(doc.Text.Text); h != "" {
		doc.Headline = &h
		doc.Indexiness = indexiness(&doc)
	}
	return doc
}

// plainLines returns body with every line ending (CRLF, or a lone CR as
// old Mac files have it) as "\n", and the other control characters (a
// NUL, say) as spaces: the HTML parser drops them from a page's text,
// and they are not words.
func plainLines(body string) []byte {
	out := make([]byte, 0, len(body))
	for i := 0; i < len(body); i++ {
		switch c := body[i]; {
		case c == '\r':
			if i+1 < len(body) && body[i+1] == '\n' {
				i++
			}
			out = append(out, '\n')
		case c < ' ' && c != '\n' && c != '\t' || c == 0x7f:
			out = append(out, ' ')
		default:
			out = append(out, c)
		}
	}
	return out
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
		if wordChars(line) == 0 {
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
