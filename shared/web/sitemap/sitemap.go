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
	"strings"
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

// Parse reads a sitemap. It returns NotSitemap (and no error) for XML
// whose root is neither urlset nor sitemapindex.
func Parse(body []byte) (Kind, []string, error) {
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
	var urls []string
	inLoc := false
	var loc strings.Builder
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if kind == NotSitemap {
				return NotSitemap, nil, nil
			}
			return kind, urls, fmt.Errorf("read sitemap: %w", err)
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
			case t.Name.Local == "loc":
				inLoc = true
				loc.Reset()
			}
		case xml.CharData:
			if inLoc {
				loc.Write(t)
			}
		case xml.EndElement:
			if t.Name.Local == "loc" && inLoc {
				inLoc = false
				if u := strings.TrimSpace(loc.String()); u != "" {
					urls = append(urls, u)
					if len(urls) >= MaxURLs {
						return kind, urls, nil
					}
				}
			}
		}
	}
	return kind, urls, nil
}
