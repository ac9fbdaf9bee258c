// Package sitemap reads sitemaps (sitemaps.org protocol 0.9): <urlset>
// and <sitemapindex> documents, plain or gzipped. It is hand-written on
// encoding/xml because the format is tiny and the Go sitemap libraries
// found are unmaintained or read whole files into memory unbounded.
package sitemap

import (
	"bytes"
	"compress/gzip"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// MaxSize is the largest sitemap read, uncompressed (the protocol's 50 MB).
const MaxSize = 50 << 20

// MaxURLs is the most URLs one sitemap may list (the protocol's 50,000).
const MaxURLs = 50000

// Kind says what a document is.
type Kind int

// The kinds of document.
const (
	NotSitemap Kind = iota
	URLSet          // lists pages
	Index           // lists sitemaps
)

// Entry is one <url> (or <sitemap>) of a sitemap: its location and the
// hints the protocol gives for recrawling it.
type Entry struct {
	Loc string
	// LastMod is <lastmod> (W3C Datetime), zero when absent or unreadable.
	LastMod time.Time
	// ChangeFreq is <changefreq>: always, hourly, daily, weekly,
	// monthly, yearly or never; "" when absent or not one of those.
	ChangeFreq string
}

// Parse reads a sitemap's locations. It returns NotSitemap (and no
// error) for XML whose root is neither urlset nor sitemapindex.
func Parse(body []byte) (Kind, []string, error) {
	kind, entries, err := ParseEntries(body)
	var urls []string
	for _, e := range entries {
		urls = append(urls, e.Loc)
	}
	return kind, urls, err
}

// ChangeFreqs are the protocol's <changefreq> values.
var ChangeFreqs = []string{"always", "hourly", "daily", "weekly", "monthly", "yearly", "never"}

// W3C Datetime, as the protocol allows it: a date, or a date and time
// with a zone.
var lastmodLayouts = []string{time.RFC3339Nano, "2006-01-02T15:04Z07:00", "2006-01-02", "2006-01", "2006"}

func parseLastMod(s string) time.Time {
	for _, l := range lastmodLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t
		}
	}
	return time.Time{}
}

// ParseEntries reads a sitemap's entries, with their hints. It returns
// NotSitemap (and no error) for XML whose root is neither urlset nor
// sitemapindex.
func ParseEntries(body []byte) (Kind, []Entry, error) {
	var r io.Reader = bytes.NewReader(body)
	if len(body) >= 2 && body[0] == 0x1f && body[1] == 0x8b {
		z, err := gzip.NewReader(r)
		if err != nil {
			return NotSitemap, nil, fmt.Errorf("gunzip sitemap: %w", err)
		}
		r = io.LimitReader(z, MaxSize)
	}
	dec := xml.NewDecoder(r)
	dec.Strict = false
	kind := NotSitemap
	var entries []Entry
	var cur Entry
	inEntry := false // within a <url> or <sitemap>
	field := ""      // the child element whose text is being read
	var text strings.Builder
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if kind == NotSitemap {
				return NotSitemap, nil, nil
			}
			return kind, entries, fmt.Errorf("read sitemap: %w", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			switch {
			case kind == NotSitemap && t.Name.Local == "urlset":
				kind = URLSet
			case kind == NotSitemap && t.Name.Local == "sitemapindex":
				kind = Index
			case kind == NotSitemap:
				return NotSitemap, nil, nil // the root is something else
			case t.Name.Local == "url" || t.Name.Local == "sitemap":
				cur, inEntry = Entry{}, true
			case t.Name.Local == "loc" || t.Name.Local == "lastmod" || t.Name.Local == "changefreq":
				field = t.Name.Local
				text.Reset()
			}
		case xml.CharData:
			if field != "" && text.Len() < maxField {
				text.Write(t)
			}
		case xml.EndElement:
			switch name := t.Name.Local; {
			case name == field:
				v := strings.TrimSpace(text.String())
				switch field {
				case "loc":
					cur.Loc = v
				case "lastmod":
					cur.LastMod = parseLastMod(v)
				case "changefreq":
					if v = strings.ToLower(v); slices.Contains(ChangeFreqs, v) {
						cur.ChangeFreq = v
					}
				}
				field = ""
				// A <loc> outside any <url> (a sloppy sitemap) is still an
				// entry of its own.
				if name == "loc" && !inEntry && cur.Loc != "" {
					entries, cur = append(entries, cur), Entry{}
				}
			case name == "url" || name == "sitemap":
				if cur.Loc != "" {
					entries = append(entries, cur)
				}
				cur, inEntry = Entry{}, false
			}
			if len(entries) >= MaxURLs {
				return kind, entries, more(dec)
			}
		}
	}
	return kind, entries, nil
}

// ErrTooManyURLs says a sitemap listed more than MaxURLs entries, the
// protocol's limit: the first MaxURLs are returned, and the rest are
// left out, as the protocol allows, but not in silence.
var ErrTooManyURLs = fmt.Errorf("the sitemap lists more than %d URLs, the protocol's limit: the rest are left out", MaxURLs)

// more reads on, once MaxURLs entries are in, and returns
// ErrTooManyURLs when another entry's element follows (nil at the
// document's end or on an error: nothing more can be read then).
func more(dec *xml.Decoder) error {
	for {
		tok, err := dec.Token()
		if err != nil {
			return nil
		}
		if t, ok := tok.(xml.StartElement); ok {
			switch t.Name.Local {
			case "url", "sitemap", "loc":
				return ErrTooManyURLs
			}
		}
	}
}

// maxField bounds the text kept of one element (a URL may be 2,048
// characters by the protocol; more is kept, within reason).
const maxField = 64 << 10

// ParseText reads a sitemap in the protocol's text format, decoded: one
// URL a line, nothing else. Blank lines and a byte order mark are
// allowed; a line that is not an absolute http(s) URL (with no space or
// control character in it) makes the text NotSitemap, with no entries:
// it is a text, not a list. It reads at most MaxSize bytes and returns
// at most MaxURLs entries.
func ParseText(text string) (Kind, []Entry) {
	if len(text) > MaxSize {
		text = text[:MaxSize]
	}
	text = strings.TrimPrefix(text, "\ufeff")
	var entries []Entry
	for line := range strings.Lines(text) {
		s := strings.TrimSpace(line)
		if s == "" {
			continue
		}
		scheme, rest, ok := strings.Cut(s, "://")
		if !ok || rest == "" || !strings.EqualFold(scheme, "http") && !strings.EqualFold(scheme, "https") ||
			strings.IndexFunc(s, func(r rune) bool { return r <= ' ' || r == 0x7f }) >= 0 {
			return NotSitemap, nil // a space or a control character: not a URL
		}
		if len(entries) < MaxURLs {
			entries = append(entries, Entry{Loc: s})
		}
	}
	if len(entries) == 0 {
		return NotSitemap, nil
	}
	return URLSet, entries
}
