package pipeline

import (
	"context"
	"sync"

	"github.com/serverless-crawler/crawler/shared/crawl"
	"github.com/serverless-crawler/crawler/shared/stage/parse"
	"github.com/serverless-crawler/crawler/shared/stage/summarize"
)

// inline is a sender that hands messages straight to the next stage's
// handler, in the sender's goroutine, and returns when they are handled:
// the parser and the fetcher admit the links they find (and the parser
// hands the page to the summarizer, see summarizeInline) without a
// message going through the database. Per page that is a hundred links
// and a document never written as messages, received and deleted.
//
// Nothing is lost: the sender's own message (the parse or fetch task) is
// deleted only after its handler returns, so if the process dies before
// the messages are handled, the task runs again and sends them again,
// and every stage takes a message twice. A message the handler fails on
// goes to its durable queue, whose worker retries it and, in the end,
// dead-letters it with its reason, as if it had been sent there.
type inline struct {
	r *runner
	w worker
}

func (r *runner) inline(w worker) inline { return inline{r: r, w: w} }

// Send handles bodies on the worker's lanes; it returns an error only if
// the bodies that failed could not be queued, or ctx is done.
func (s inline) Send(ctx context.Context, bodies ...[]byte) error {
	var mu sync.Mutex
	var failed [][]byte
	onLanes(s.w, len(bodies), func(i int) []byte { return bodies[i] }, func(i int) bool {
		if err := s.w.handle(ctx, bodies[i]); err != nil {
			if ctx.Err() != nil {
				return false
			}
			s.r.log.DebugContext(ctx, "handled inline: failed, queued", "queue", s.w.queue, "err", err)
			mu.Lock()
			failed = append(failed, bodies[i])
			mu.Unlock()
		}
		return true
	})
	if err := ctx.Err(); err != nil {
		return err
	}
	s.r.wakeDrive() // links admitted may be due
	return s.r.sender(s.w.queue).Send(ctx, failed...)
}

// eventInline is the enqueue sender of the parser and the fetcher: it
// also takes enqueue events as they are (parse.EventSender), so a page's
// links are admitted without being encoded and decoded. An event that
// fails goes, encoded, to the enqueue queue, as with Send.
type eventInline struct {
	inline
	admit func(context.Context, crawl.EnqueueEvent) error
}

func (s eventInline) SendEvents(ctx context.Context, evs ...crawl.EnqueueEvent) error {
	var failed []crawl.EnqueueEvent
	for _, ev := range evs {
		if err := s.admit(ctx, ev); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			s.r.log.DebugContext(ctx, "handled inline: failed, queued", "queue", s.w.queue, "err", err)
			failed = append(failed, ev)
		}
	}
	s.r.wakeDrive() // links admitted may be due
	if len(failed) == 0 {
		return nil
	}
	return s.r.sender(s.w.queue).Send(ctx, parse.EncodeEvents(failed)...)
}

// summarizeInline is the parser's summarize sender: a parsed document
// goes straight to the summarizer (parse.DocumentSender), an encoded task
// to the summarize queue.
type summarizeInline struct {
	queueSender
	s *summarize.Summarizer
}

func (s summarizeInline) SendDocument(ctx context.Context, t crawl.SummarizeTask, doc *crawl.Document) error {
	return s.s.HandleDocument(ctx, t, doc)
}
