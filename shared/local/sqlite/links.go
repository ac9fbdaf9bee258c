package sqlite

import (
	"encoding/json"
	"fmt"
	"strconv"

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
func encodeLinkRows(links []crawl.LinkSummary) (linkRows, error) {
	r := linkRows{ends: make([]int, len(links))}
	var row [5]any
	for i := range links {
		l := &links[i]
		var dest any
		if l.DestinationType != nil {
			dest = int(*l.DestinationType)
		}
		row = [5]any{dest, int(l.Locality), optString(l.LinkToFragment), optString(l.HTMLTagName), optString(l.Text)}
		n := 5
		for n > 2 && row[n-1] == nil {
			n--
		}
		r.tails = append(r.tails, ',')
		r.tails = strconv.AppendUint(r.tails, uint64(l.Flags()), 10)
		js, err := json.Marshal(row[:n])
		if err != nil {
			return linkRows{}, fmt.Errorf("encode link to %s: %w", l.LinkToURL, err)
		}
		js[0] = ',' // the array's "[": the row goes on after the flags
		r.tails = append(r.tails, js...)
		r.ends[i] = len(r.tails)
	}
	return r, nil
}

// json returns the JSON array of the rows, the url ids from urlID.
func (r linkRows) json(links []crawl.LinkSummary, urlID func(string) (int64, error)) ([]byte, error) {
	out := make([]byte, 0, len(r.tails)+8*len(links)+2)
	out = append(out, '[')
	start := 0
	for i := range links {
		id, err := urlID(links[i].LinkToURL)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, '[')
		out = strconv.AppendInt(out, id, 10)
		out = append(out, r.tails[start:r.ends[i]]...)
		start = r.ends[i]
	}
	return append(out, ']'), nil
}

// optString is s as a JSON value: null when s is nil.
func optString(s *string) any {
	if s == nil {
		return nil
	}
	return *s
}
