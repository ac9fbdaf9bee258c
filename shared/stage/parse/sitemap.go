package parse

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/serverless-crawler/crawler/shared/crawl"
	"github.com/serverless-crawler/crawler/shared/web/sitemap"
)

// handleSitemap reads an XML or gzip body: a sitemap's URLs (or an
// index's sitemaps) are enqueued one hop further on, within
// MaxURLsFromPage; anything else is summarized as a plain file.
func (p *Parser) handleSitemap(ctx context.Context, t crawl.ParseTask, body []byte) error {
	kind, entries, err := sitemap.ParseEntries(body)
	if err != nil {
		p.log.WarnContext(ctx, "sitemap read partly", "url", t.URL, "err", err)
	}
	return p.enqueueSitemap(ctx, t, kind, entries)
}

// enqueueSitemap enqueues what a sitemap lists (nothing when the body
// was NotSitemap) and sends the file's summarize task, without a
// document.
func (p *Parser) enqueueSitemap(ctx context.Context, t crawl.ParseTask, kind sitemap.Kind, entries []sitemap.Entry) error {
	if kind != sitemap.NotSitemap {
		var bodies [][]byte
		long := 0
		for i, e := range entries {
			if len(e.Loc) > crawl.MaxURLLength {
				long++ // no event may carry it, nor would the scheduler keep it
				continue
			}
			ev := crawl.EnqueueEvent{URL: e.Loc, Hops: t.Hops + 1, MaxDepth: t.MaxDepth, Parent: t.URL, ChangeFreq: e.ChangeFreq}
			if !e.LastMod.IsZero() && e.LastMod.Unix() > 0 {
				ev.LastMod = e.LastMod.Unix()
			}
			if kind == sitemap.Index {
				ev.Hops = t.Hops // a sitemap of the index is as near the seed as the index
			}
			if most := p.maxLinks(t); most > 0 && i >= most {
				ev.Overflow = true
			}
			b, err := json.Marshal(ev)
			if err != nil {
				return err
			}
			bodies = append(bodies, b)
		}
		if long > 0 {
			p.log.WarnContext(ctx, "sitemap URLs too long to crawl", "url", t.URL, "count", long, "max_bytes", crawl.MaxURLLength)
		}
		if err := p.enqueue.Send(ctx, bodies...); err != nil {
			return fmt.Errorf("enqueue %d sitemap URLs of %s: %w", len(bodies), t.URL, err)
		}
	}
	st, _ := json.Marshal(crawl.SummarizeTask{URL: t.URL, CrawlUUID: t.CrawlUUID, Crawl: t.Crawl})
	if err := p.summarize.Send(ctx, st); err != nil {
		return fmt.Errorf("send summarize task for %s: %w", t.URL, err)
	}
	return nil
}
