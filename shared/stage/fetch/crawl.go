package fetch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"mime"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/serverless-crawler/crawler/shared/crawl"
	"github.com/serverless-crawler/crawler/shared/web/linkheader"
	"github.com/serverless-crawler/crawler/shared/web/robots"
	"github.com/serverless-crawler/crawler/shared/web/safedial"
	"github.com/serverless-crawler/crawler/shared/web/textenc"
	"github.com/serverless-crawler/crawler/shared/web/urlnorm"
	"github.com/serverless-crawler/crawler/shared/web/warc"
)

// outcome is a crawl to record and what follows from it.
type outcome struct {
	cr      crawl.Crawl
	retryAt time.Time // robots.txt unavailable, or a long Retry-After: crawl again then
	putOff  time.Time // not requested, nothing to record: the host asked to wait until then
}

// crawl fetches one candidate and returns the crawl to record. Its error
// is only for failures that are not an outcome of the URL (the process
// is shutting down, the blob store failed): the task is then retried.
// taskConfig is the configuration of one fetch: the site's request
// delay, timeout and body size limit (seed 001, carried by the task)
// where it has them.
func (f *Fetcher) taskConfig(t crawl.FetchTask) Config {
	cfg := f.cfg
	if t.DelayMS > 0 {
		cfg.Delay = time.Duration(t.DelayMS) * time.Millisecond
	}
	if t.TimeoutMS > 0 {
		cfg.Timeout = time.Duration(t.TimeoutMS) * time.Millisecond
	}
	if t.MaxBytes > 0 {
		cfg.MaxResourceSize = t.MaxBytes
	}
	return cfg
}

func (f *Fetcher) crawl(ctx context.Context, c crawl.Candidate, t crawl.FetchTask) (outcome, error) {
	start := f.now()
	out := outcome{cr: crawl.Crawl{Log: crawl.CrawlLog{
		AgentUUID: f.cfg.AgentUUID, URL: c.URL, CrawlType: t.CrawlType, CrawlUUID: t.CrawlUUID, TimeStarted: start.Unix(),
	}}}
	cr := &out.cr
	var robotsNote string // lines of robots.txt that were ignored, said in every crawl they let through
	// answered is when the last response was read: the crawl's time ends
	// there, not when its body is stored (on AWS with the rest of its
	// batch, in one WARC file) or decoded.
	var answered time.Time
	finish := func(code crawl.ExitCode, msg string) (outcome, error) {
		cr.Log.ExitCode = code
		if answered.IsZero() {
			answered = f.now()
		}
		cr.Log.TimeTakenMS = answered.Sub(start).Milliseconds()
		if robotsNote != "" {
			if msg != "" {
				msg += "; "
			}
			msg += robotsNote
		}
		if msg != "" {
			// A server's words (a status line, a Location) can run to
			// megabytes; the log keeps their head.
			msg = crawl.Truncate(strings.ToValidUTF8(msg, "\uFFFD"), crawl.MaxLogMessage)
			cr.Log.Message = &msg
		}
		return out, nil
	}
	if f.cfg.MaxRedirects > 0 && c.NRedirs > f.cfg.MaxRedirects {
		return finish(crawl.ExitTooManyRedirects, fmt.Sprintf("reached after %d redirects from %s (limit %d)", c.NRedirs, c.OrigURL, f.cfg.MaxRedirects))
	}
	u, err := url.Parse(c.URL)
	if err != nil {
		return finish(crawl.ExitInvalidURL, err.Error())
	}

	// A host that asked to wait is sent nothing until then, not even
	// its robots.txt: a first crawl or recrawl (queued) is put off. A
	// fetch again of a crawl recorded without its log is not: putting
	// it off would lose that crawl's log, and its one request is
	// answered the same way.
	backedOff := func() bool {
		until, ok := f.hostBackOff(ctx, c.Host)
		if ok && c.State == crawl.StateQueued {
			out.putOff = until
		}
		return !out.putOff.IsZero()
	}
	if backedOff() {
		return out, nil
	}
	rules, err := f.rules(ctx, u, t)
	if err != nil {
		return out, err
	}
	if rules.Refused {
		return finish(crawl.ExitBlockedAddress, rules.Reason)
	}
	if v := rules.Verdict(u.RequestURI()); !v.Allowed {
		if rules.Temporary {
			out.retryAt = rules.Expires
		}
		// The verdict names the group, the rule and its line, and the
		// lines that were ignored.
		return finish(crawl.ExitRobotsDisallowed, "disallowed by robots.txt: "+v.String())
	}
	robotsNote = rules.IgnoredNote()
	cfg := f.taskConfig(t)
	delay := max(cfg.Delay, min(rules.CrawlDelay, f.cfg.MaxCrawlDelay))

	done, err := f.polite.Wait(ctx, c.Host, delay)
	if err != nil {
		return out, fmt.Errorf("wait for %s: %w", c.Host, err)
	}
	defer done()
	if backedOff() {
		// The host answered "wait" to the request before this one, while
		// this one waited for its turn.
		return out, nil
	}
	// The crawl starts when its host's turn comes: the wait is the
	// politeness queue's, not the crawl's (a report's slowest crawls
	// ranked the delay between a host's requests, not slow pages).
	start = f.now()
	cr.Log.TimeStarted = start.Unix()
	var res response
	for attempt := 0; ; attempt++ {
		if res, err = f.get(ctx, c, cfg); err != nil {
			return out, err
		}
		cr.Requests = append(cr.Requests, res.req)
		wait, retry := f.retryAfter(res, attempt, delay)
		if !retry {
			break
		}
		reason := res.msg
		if reason == "" && res.resp != nil {
			reason = "HTTP " + res.resp.Status // a 429 or 503
		}
		f.log.InfoContext(ctx, "retrying", "url", c.URL, "attempt", attempt+1, "after", wait, "reason", reason)
		if err := f.polite.Sleep(ctx, c.Host, wait); err != nil {
			return out, err
		}
	}
	// A server that asks for a longer wait than a crawl waits (429,
	// 503): this URL is due again then, and its host is sent nothing
	// until then (hostBackOff), up to MaxBackOff.
	if wait, ok := f.longRetryAfter(res); ok {
		// Up to a whole second: due times are stored in seconds, and a
		// URL released in the last part second would be put off again.
		out.retryAt = f.now().Add(wait).Add(time.Second - 1).Truncate(time.Second)
		f.backOffHost(ctx, c.Host, out.retryAt)
	}
	// The request is over (its body read): the host is free for the next
	// one while this response is stored and decoded.
	done()
	answered = f.now()
	if res.code != crawl.ExitUnknown {
		return finish(res.code, attempts(res.msg, len(cr.Requests)))
	}
	resp := res.resp
	status := resp.StatusCode
	switch {
	case status == http.StatusPartialContent:
		// A part of the body, which the crawler never asks for (it sends
		// no Range): stored as the page, it would be taken for all of it.
		return finish(crawl.ExitBadContent, "HTTP "+resp.Status+" to a request that asked for no range")
	case status >= 200 && status < 300:
		return f.stored(ctx, &out, res, finish)
	case status == http.StatusNotModified:
		return finish(crawl.ExitUnchanged, "")
	case status >= 300 && status < 400:
		loc := resp.Header.Get("Location")
		if loc == "" {
			return finish(crawl.ExitBadContent, fmt.Sprintf("HTTP %d without a Location header", status))
		}
		to, err := urlnorm.Resolve(c.URL, loc)
		if err != nil {
			return finish(crawl.ExitBadContent, fmt.Sprintf("HTTP %d to an unusable Location %q: %v", status, loc, err))
		}
		cr.Redirect = &crawl.Redirect{
			URL: c.URL, LastModified: res.req.ServerLastModified, ToURL: to.URL,
			InformationSource: crawl.SourceHTTPHeader, IsPermanent: status == 301 || status == 308,
		}
		if to.URL == c.URL || slices.Contains(c.RedirectChain, to.URL) {
			return finish(crawl.ExitRedirectLoop, fmt.Sprintf("redirect loop: %s -> %s", strings.Join(append(c.RedirectChain, c.URL), " -> "), to.URL))
		}
		return finish(crawl.ExitRedirect, "")
	case status == http.StatusTooManyRequests:
		return finish(crawl.ExitRateLimited, attempts("HTTP "+resp.Status, len(cr.Requests)))
	case (status == http.StatusNotFound || status == http.StatusGone) && f.learnedFromRobots(ctx, c):
		return finish(crawl.ExitNoSitemap, "no sitemap here: HTTP "+resp.Status)
	case status >= 400 && status < 500:
		return finish(crawl.ExitHTTPClientError, "HTTP "+resp.Status)
	case status >= 500 && status < 600:
		return finish(crawl.ExitHTTPServerError, attempts("HTTP "+resp.Status, len(cr.Requests)))
	default:
		// 1xx as a final answer, or past 599: no HTTP status (RFC 9110
		// section 15 defines 100 to 599).
		return finish(crawl.ExitBadContent, "unexpected HTTP "+resp.Status)
	}
}

// fromRobots reports whether the candidate was first learned from its
// origin's robots.txt: a sitemap named there, or /sitemap.xml guessed
// when it names none. A URL also linked from a page first keeps that page
// as its parent, and its 404 stays an error.
func fromRobots(c crawl.Candidate) bool {
	p, err := url.Parse(c.Parent)
	return err == nil && p.Path == "/robots.txt" && p.RawQuery == ""
}

// apacheText reports whether a Content-Type is one the WHATWG MIME
// Sniffing Standard tests for binary bytes (its "check-for-apache-bug
// flag"): text/plain bare, or with the charset ISO-8859-1 or UTF-8,
// what servers send for files they cannot type. A body labelled as
// UTF-16 holds NUL bytes and is text.
func apacheText(contentType string) bool {
	_, params, err := mime.ParseMediaType(contentType)
	if err != nil {
		return true
	}
	if len(params) == 0 {
		return true
	}
	cs, ok := params["charset"]
	return ok && len(params) == 1 && (strings.EqualFold(cs, "iso-8859-1") || strings.EqualFold(cs, "utf-8"))
}

// learnedFromRobots reports whether c was learned from its origin's
// robots.txt (fromRobots), or is where such a URL redirected to: a
// sitemap moved to https or to www is a sitemap still. (A redirect's
// target names the redirecting URL as its parent; the chain's first URL
// is read, for redirect targets only.)
func (f *Fetcher) learnedFromRobots(ctx context.Context, c crawl.Candidate) bool {
	if fromRobots(c) {
		return true
	}
	if c.NRedirs == 0 || c.OrigURL == "" || c.OrigURL == c.URL {
		return false
	}
	o, err := f.store.GetCandidate(ctx, c.OrigURL)
	return err == nil && fromRobots(o)
}

func attempts(msg string, n int) string {
	if n > 1 {
		return fmt.Sprintf("%s (after %d attempts)", msg, n)
	}
	return msg
}

// retryAfter says whether to send the request again, and after how long
// (never sooner than the host's delay; the wait starts when the previous
// attempt's answer is in, and the host's slot is held meanwhile):
// 429 and 503 honour Retry-After (up to MaxRetryAfter); transient
// network errors back off exponentially with jitter; at most MaxRetries.
func (f *Fetcher) retryAfter(res response, attempt int, delay time.Duration) (time.Duration, bool) {
	if attempt >= f.cfg.MaxRetries {
		return 0, false
	}
	backoff := f.cfg.RetryBase << attempt
	backoff += time.Duration(rand.Int64N(int64(backoff)/2 + 1))
	switch {
	case res.resp != nil && (res.resp.StatusCode == http.StatusTooManyRequests || res.resp.StatusCode == http.StatusServiceUnavailable):
		if ra, ok := parseRetryAfter(res.resp.Header.Get("Retry-After"), f.now()); ok {
			if ra > f.cfg.MaxRetryAfter {
				return 0, false // the server asks for longer than we wait in one crawl
			}
			return max(ra, delay), true
		}
		return max(backoff, delay), true
	case res.transient:
		return max(backoff, delay), true
	}
	return 0, false
}

// longRetryAfter returns the wait a 429 or 503 asked for when it is
// longer than a crawl waits (MaxRetryAfter), at most MaxBackOff.
func (f *Fetcher) longRetryAfter(res response) (time.Duration, bool) {
	if res.resp == nil || res.resp.StatusCode != http.StatusTooManyRequests && res.resp.StatusCode != http.StatusServiceUnavailable {
		return 0, false
	}
	ra, ok := parseRetryAfter(res.resp.Header.Get("Retry-After"), f.now())
	if !ok || ra <= f.cfg.MaxRetryAfter {
		return 0, false
	}
	return min(ra, f.cfg.MaxBackOff), true
}

// parseRetryAfter reads a Retry-After header: seconds or an HTTP date.
func parseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if s, err := strconv.Atoi(v); err == nil && s >= 0 {
		return time.Duration(s) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(0, t.Sub(now)), true
	}
	return 0, false
}

// rules returns the robots.txt rules for u's origin, fetching robots.txt
// (before any other request to the host) when they are not cached. When
// it fetches them, it enqueues the sitemaps they name (or /sitemap.xml).
func (f *Fetcher) rules(ctx context.Context, u *url.URL, t crawl.FetchTask) (*robots.Rules, error) {
	origin := u.Scheme + "://" + u.Host
	rules, loaded, err := f.robots.Get(ctx, origin, func(ctx context.Context) (*robots.Rules, error) { return f.fetchRobots(ctx, u) })
	if err != nil {
		return nil, fmt.Errorf("robots.txt of %s: %w", origin, err)
	}
	if loaded && !rules.Temporary && !rules.Refused && !rules.Shared && ctx.Err() == nil {
		sitemaps := rules.Sitemaps
		if len(sitemaps) == 0 {
			sitemaps = []string{origin + "/sitemap.xml"}
		}
		var bodies [][]byte
		for _, sm := range sitemaps {
			if len(sm) > crawl.MaxURLLength {
				// No event may carry it, nor would the scheduler keep it.
				f.log.WarnContext(ctx, "robots.txt Sitemap URL too long to crawl", "robots", robots.URL(u), "bytes", len(sm), "max_bytes", crawl.MaxURLLength)
				continue
			}
			b, _ := json.Marshal(crawl.EnqueueEvent{URL: sm, Hops: 1, MaxDepth: t.MaxDepth, Parent: robots.URL(u)})
			bodies = append(bodies, b)
		}
		if err := f.q.Enqueue.Send(ctx, bodies...); err != nil {
			return nil, fmt.Errorf("enqueue sitemaps of %s: %w", origin, err)
		}
	}
	return rules, nil
}

// fetchRobots fetches an origin's robots.txt, politely, following up to
// five redirects (RFC 9309), reading at most robots.MaxSize.
//
// It returns an error, and no verdict, when it did not get the host's
// politeness slot (cancelled, or the host is busy elsewhere): the fetch is
// then retried as a whole, instead of recording a verdict on the host.
func (f *Fetcher) fetchRobots(ctx context.Context, u *url.URL) (*robots.Rules, error) {
	origin := u.Scheme + "://" + u.Host
	if r := f.sharedRobots(ctx, origin); r != nil {
		return r, nil
	}
	now := f.now()
	done, err := f.polite.Wait(ctx, u.Host, f.cfg.Delay)
	if err != nil {
		return nil, fmt.Errorf("wait for %s: %w", u.Host, err)
	}
	defer done()
	// Another process may have fetched it while we waited for the host.
	if r := f.sharedRobots(ctx, origin); r != nil {
		return r, nil
	}
	rctx, cancel := context.WithTimeout(ctx, f.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodGet, robots.URL(u), nil)
	if err != nil {
		return robots.Unreachable(err, now, f.cfg.RobotsErrorTTL), nil
	}
	req.Header.Set("User-Agent", f.cfg.UserAgent)
	req.Header.Set("Accept-Encoding", AcceptEncoding)
	resp, err := f.robotsClient.Do(req)
	if err != nil {
		ttl := f.cfg.RobotsErrorTTL
		if ctx.Err() != nil {
			ttl = 0
		}
		code, msg := classify(err, f.cfg.Timeout)
		if code == crawl.ExitBlockedAddress {
			return robots.RefusedHost(msg, now, f.cfg.RobotsTTL), nil
		}
		return robots.Unreachable(errors.New(msg), now, ttl), nil
	}
	defer resp.Body.Close()
	body, err := readRobots(resp)
	if err != nil && resp.StatusCode < 300 {
		_, msg := classify(err, f.cfg.Timeout)
		return robots.Unreachable(errors.New(msg), now, f.cfg.RobotsErrorTTL), nil
	}
	if f.SharedRobots != nil {
		rf := crawl.RobotsFile{Status: resp.StatusCode, Body: body, FetchedAt: now}
		if err := f.SharedRobots.PutRobots(ctx, origin, rf); err != nil {
			f.log.WarnContext(ctx, "sharing robots.txt failed; other processes will fetch it too", "origin", origin, "err", err)
		}
	}
	rules := robots.FromResponse(resp.StatusCode, body, f.cfg.UserAgent, now, f.cfg.RobotsTTL, f.cfg.RobotsErrorTTL)
	if rules.IgnoredCount > 0 {
		f.log.Info("robots.txt lines ignored", "origin", origin, "count", rules.IgnoredCount, "lines", rules.IgnoredNote())
	}
	return rules, nil
}

// sharedRobots returns the origin's rules from the shared store while
// they are fresh, else nil (a store failure only costs a fetch).
func (f *Fetcher) sharedRobots(ctx context.Context, origin string) *robots.Rules {
	if f.SharedRobots == nil {
		return nil
	}
	rf, err := f.SharedRobots.GetRobots(ctx, origin)
	if err != nil {
		if !errors.Is(err, crawl.ErrNotFound) {
			f.log.WarnContext(ctx, "reading shared robots.txt failed; fetching it", "origin", origin, "err", err)
		}
		return nil
	}
	r := robots.FromResponse(rf.Status, rf.Body, f.cfg.UserAgent, rf.FetchedAt, f.cfg.RobotsTTL, f.cfg.RobotsErrorTTL)
	if !f.now().Before(r.Expires) {
		return nil
	}
	r.Shared = true
	return r
}

// stored records a 2xx response's body: in the blob store, as a file
// row, and as file_text when it is text.
func (f *Fetcher) stored(ctx context.Context, out *outcome, res response, finish func(crawl.ExitCode, string) (outcome, error)) (outcome, error) {
	cr := &out.cr
	h := res.resp.Header
	ct := h.Get("Content-Type")
	mt := textenc.MediaType(ct)
	sniffed := textenc.MediaType(http.DetectContentType(res.body))
	switch {
	case mt == "" || mt == "application/octet-stream" || mt == "text/plain" && sniffed == "text/html":
		mt = sniffed
	case mt == "text/plain" && apacheText(ct) && textenc.LooksBinary(res.body):
		// Binary bytes labelled text (a PDF, an archive): its sniffed type,
		// or octet-stream, so that it is stored and not read as words.
		mt = sniffed
		if textenc.IsText(mt) {
			mt = "application/octet-stream"
		}
	}
	x := warc.Exchange{URL: cr.Log.URL, Date: time.Unix(res.req.TimeSent, 0), Method: http.MethodGet,
		Proto: res.resp.Proto, Status: res.resp.StatusCode, Response: h, Body: res.body}
	if res.resp.Request != nil {
		x.Request = res.resp.Request.Header.Clone()
		x.Request.Set("Host", res.resp.Request.URL.Host)
	}
	// The body is kept before the crawl is recorded: a record never
	// names a body that is not there.
	key, err := f.bodies.Keep(ctx, x)
	if err != nil {
		return *out, fmt.Errorf("store body of %s: %w", cr.Log.URL, err)
	}
	size := int64(len(res.body))
	file := &crawl.File{
		URL: cr.Log.URL, LastModified: res.req.ServerLastModified, FileSize: &size, MIMEType: mt, BodyKey: key,
		BodySHA256:  crawl.BodySHA256(res.body),
		ContentType: ct, ContentLanguage: h.Get("Content-Language"), RobotsTag: strings.Join(h.Values("X-Robots-Tag"), ", "),
	}
	// A canonical named in a Link header (RFC 8288, RFC 6596): the HTML
	// <link rel=canonical>, read by the parser, overrides it.
	if target, ok := linkheader.Canonical(h.Values("Link")); ok {
		if c, err := urlnorm.Resolve(cr.Log.URL, target); err == nil && c.URL != cr.Log.URL {
			file.CanonicalURL = &c.URL
		}
	}
	cr.File = file
	if textenc.IsText(mt) {
		text, cs, err := textenc.DecodeAs(res.body, ct, mt)
		if err != nil {
			return finish(crawl.ExitBadContent, err.Error())
		}
		file.Charset = cs
		cr.FileText = &text
	}
	return finish(crawl.ExitComplete, "")
}

// response is the result of one GET: either an outcome code (the request
// failed, or the body was too large) or a response with its body read.
type response struct {
	req       crawl.Request
	resp      *http.Response
	body      []byte
	code      crawl.ExitCode
	msg       string
	transient bool // a network failure worth retrying
}

func (f *Fetcher) get(ctx context.Context, c crawl.Candidate, cfg Config) (response, error) {
	sent := f.now()
	r := response{req: crawl.Request{URL: c.URL, TimeSent: sent.Unix(), RobotsTxtApproved: true}}
	fail := func(code crawl.ExitCode, msg string) (response, error) {
		d := f.now().Sub(sent).Milliseconds()
		r.req.DurationMS, r.req.ExitCode, r.code, r.msg = &d, code, code, msg
		return r, nil
	}
	reqCtx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(reqCtx, http.MethodGet, c.URL, nil)
	if err != nil {
		return fail(crawl.ExitInvalidURL, err.Error())
	}
	keepPath(req, c.URL)
	req.Header.Set("User-Agent", f.cfg.UserAgent)
	req.Header.Set("Accept", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8")
	req.Header.Set("Accept-Encoding", AcceptEncoding)
	if c.LastContentfulETag != nil {
		req.Header.Set("If-None-Match", *c.LastContentfulETag)
	}
	if c.LastContentfulModified != nil {
		req.Header.Set("If-Modified-Since", time.Unix(*c.LastContentfulModified, 0).UTC().Format(http.TimeFormat))
	}
	resp, err := f.client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return r, ctx.Err()
		}
		r.transient = isTransient(err)
		return fail(classify(err, cfg.Timeout))
	}
	defer resp.Body.Close()
	restoreLocation(resp)
	r.resp = resp
	status := resp.StatusCode
	r.req.HTTPStatusCode = &status
	if et := resp.Header.Get("ETag"); et != "" {
		r.req.HTTPETag = &et
	}
	if lm, err := http.ParseTime(resp.Header.Get("Last-Modified")); err == nil {
		t := lm.Unix()
		r.req.ServerLastModified = &t
	}
	if status >= 200 && status < 300 {
		body, err := readBody(resp, cfg.MaxResourceSize)
		var ne *netReadError
		switch {
		case err != nil && ctx.Err() != nil:
			return r, ctx.Err()
		case errors.Is(err, errTooLarge):
			return fail(crawl.ExitTooLarge, fmt.Sprintf("body larger than MaxResourceSize (%d bytes); cut off", cfg.MaxResourceSize))
		case errors.As(err, &ne):
			r.transient = isTransient(ne.err)
			code, msg := classify(ne.err, cfg.Timeout)
			return fail(code, "reading body: "+msg)
		case err != nil:
			return fail(crawl.ExitBadContent, err.Error())
		}
		r.body = body
	} else {
		// Drain a little so the connection can be reused; no more.
		io.CopyN(io.Discard, resp.Body, 64<<10)
	}
	d := f.now().Sub(sent).Milliseconds()
	r.req.DurationMS = &d
	r.req.ExitCode = requestExit(status)
	return r, nil
}

func requestExit(status int) crawl.ExitCode {
	switch {
	case status >= 200 && status < 300:
		return crawl.ExitComplete
	case status == 304:
		return crawl.ExitUnchanged
	case status >= 300 && status < 400:
		return crawl.ExitRedirect
	case status == 429:
		return crawl.ExitRateLimited
	case status >= 400 && status < 500:
		return crawl.ExitHTTPClientError
	case status >= 500 && status < 600:
		return crawl.ExitHTTPServerError
	default:
		return crawl.ExitBadContent
	}
}

// classify turns a transport error into an outcome.
func classify(err error, timeout time.Duration) (crawl.ExitCode, string) {
	var be *safedial.BlockedError
	if errors.As(err, &be) {
		return crawl.ExitBlockedAddress, be.Error()
	}
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout() {
		return crawl.ExitTimeout, fmt.Sprintf("no complete answer within %v", timeout)
	}
	return crawl.ExitNetworkError, unwrapAll(err).Error()
}

// isTransient reports whether a network failure may well pass on retry:
// a reset or refused connection, a temporary DNS failure, a cut stream.
// Timeouts are not retried (each costs a full timeout), nor are refusals
// by policy.
func isTransient(err error) bool {
	var be *safedial.BlockedError
	var ne net.Error
	var dnsErr *net.DNSError
	switch {
	case errors.As(err, &be), errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return false
	case errors.As(err, &dnsErr):
		return dnsErr.IsTemporary
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, io.EOF), errors.Is(err, syscall.EPIPE):
		return true
	}
	return false
}

func unwrapAll(err error) error {
	for {
		u := errors.Unwrap(err)
		if u == nil {
			return err
		}
		err = u
	}
}

// RobotsTag reads an X-Robots-Tag header value: directives for all
// agents, and those addressed to the user agent's product token
// ("serverless-crawler: noindex").
func RobotsTag(v, userAgent string) (nofollow, noindex bool) {
	token := strings.ToLower(robots.Token(userAgent))
	forUs := true
	for _, part := range strings.Split(strings.ToLower(v), ",") {
		part = strings.TrimSpace(part)
		if name, rest, ok := strings.Cut(part, ":"); ok && !strings.Contains(name, " ") && name != "unavailable_after" {
			forUs = name == token
			part = strings.TrimSpace(rest)
		}
		if !forUs {
			continue
		}
		switch part {
		case "nofollow":
			nofollow = true
		case "noindex":
			noindex = true
		case "none":
			nofollow, noindex = true, true
		}
	}
	return nofollow, noindex
}
