package sqlite

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/serverless-crawler/crawler/shared/crawl"
)

// linkRows is a generation's link_summary rows encoded for
// generation_links (schema.sql), all but each row's link_to_url: a url
// id, which only the writer can give. Each row's rest is its tail,
// tails[ends[i-1]:ends[i]]: ",flags,destination_type,link_locality"
// then the fragment, tag name and text as far as the last one present,
// and the closing "]".
type linkRows struct {
	tails []byte
	ends  []int
}

// encodeLinkRows encodes links' rows but for their url ids. A page's
// links are hundreds on real sites: one row each in the writer was the
// largest part of its work (BENCHMARKS.md, "Link rows a row per page").
// Numbers are appended as they are and strings through one JSON encoder,
// so that a page of many links leaves little garbage.
func encodeLinkRows(links []crawl.LinkSummary) (linkRows, error) {
	r := linkRows{ends: make([]int, len(links)), tails: make([]byte, 0, 16*len(links))}
	var str bytes.Buffer
	enc := json.NewEncoder(&str)
	enc.SetEscapeHTML(false)
	for i := range links {
		l := &links[i]
		r.tails = append(r.tails, ',')
		r.tails = strconv.AppendUint(r.tails, uint64(l.Flags()), 10)
		r.tails = append(r.tails, ',')
		if l.DestinationType != nil {
			r.tails = strconv.AppendInt(r.tails, int64(*l.DestinationType), 10)
		} else {
			r.tails = append(r.tails, "null"...)
		}
		r.tails = append(r.tails, ',')
		r.tails = strconv.AppendInt(r.tails, int64(l.Locality), 10)
		opt := []*string{l.LinkToFragment, l.HTMLTagName, l.Text}
		for len(opt) > 0 && opt[len(opt)-1] == nil {
			opt = opt[:len(opt)-1] // trailing nulls left off
		}
		for _, s := range opt {
			r.tails = append(r.tails, ',')
			if s == nil {
				r.tails = append(r.tails, "null"...)
				continue
			}
			str.Reset()
			if err := enc.Encode(*s); err != nil {
				return linkRows{}, fmt.Errorf("encode link to %s: %w", l.LinkToURL, err)
			}
			r.tails = append(r.tails, bytes.TrimSuffix(str.Bytes(), []byte("\n"))...)
		}
		r.tails = append(r.tails, ']')
		r.ends[i] = len(r.tails)
	}
	return r, nil
}

// json returns the JSON array of the rows, the url ids from urlID, as
// the string SQLite is given (a blob it would read as its binary JSON):
// built in place, not copied, since a page's links can be megabytes.
func (r linkRows) json(links []crawl.LinkSummary, urlID func(string) (int64, error)) (string, error) {
	var out strings.Builder
	out.Grow(len(r.tails) + 8*len(links) + 2)
	out.WriteByte('[')
	var num []byte
	start := 0
	for i := range links {
		id, err := urlID(links[i].LinkToURL)
		if err != nil {
			return "", err
		}
		if i > 0 {
			out.WriteByte(',')
		}
		out.WriteByte('[')
		num = strconv.AppendInt(num[:0], id, 10)
		out.Write(num)
		out.Write(r.tails[start:r.ends[i]])
		start = r.ends[i]
	}
	out.WriteByte(']')
	return out.String(), nil
}
