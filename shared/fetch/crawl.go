package fetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/serverless-crawler/crawler/shared/crawl"
	"github.com/serverless-crawler/crawler/shared/textenc"
	"github.com/serverless-crawler/crawler/shared/urlnorm"
)

// crawl fetches one candidate and returns the crawl to record. Its error
// is only for failures that are not an outcome of the URL (the process
// is shutting down, the blob store failed): the task is then retried.
func (f *Fetcher) crawl(ctx context.Context, c crawl.Candidate, t crawl.FetchTask) (crawl.Crawl, error) {
	start := f.now()
	cr := crawl.Crawl{Log: crawl.CrawlLog{
		AgentUUID: f.cfg.AgentUUID, URL: c.URL, CrawlType: t.CrawlType, CrawlUUID: t.CrawlUUID, TimeStarted: start.Unix(),
	}}
	finish := func(code crawl.ExitCode, msg string) (crawl.Crawl, error) {
		cr.Log.ExitCode = code
		cr.Log.TimeTakenMS = f.now().Sub(start).Milliseconds()
		if msg != "" {
			cr.Log.Message = &msg
		}
		return cr, nil
	}
	if f.cfg.MaxRedirects > 0 && c.NRedirs > f.cfg.MaxRedirects {
		return finish(crawl.ExitTooManyRedirects, fmt.Sprintf("reached after %d redirects from %s (limit %d)", c.NRedirs, c.OrigURL, f.cfg.MaxRedirects))
	}

	done, err := f.polite.Wait(ctx, c.Host, f.cfg.Delay)
	if err != nil {
		return cr, fmt.Errorf("wait for %s: %w", c.Host, err)
	}
	defer done()

	res, err := f.get(ctx, c)
	if err != nil {
		return cr, err
	}
	cr.Requests = append(cr.Requests, res.req)
	if res.code != crawl.ExitUnknown {
		return finish(res.code, res.msg)
	}
	resp := res.resp
	status := resp.StatusCode
	switch {
	case status >= 200 && status < 300:
		return f.stored(ctx, &cr, res, finish)
	case status == http.StatusNotModified:
		return finish(crawl.ExitUnchanged, "")
	case status >= 300 && status < 400:
		loc := resp.Header.Get("Location")
		if loc == "" {
			return finish(crawl.ExitBadContent, fmt.Sprintf("HTTP %d without a Location header", status))
		}
		base, _ := urlnorm.Parse(c.URL)
		to, err := urlnorm.Resolve(base, loc)
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
		return finish(crawl.ExitRateLimited, "HTTP "+resp.Status)
	case status >= 400 && status < 500:
		return finish(crawl.ExitHTTPClientError, "HTTP "+resp.Status)
	case status >= 500:
		return finish(crawl.ExitHTTPServerError, "HTTP "+resp.Status)
	default:
		return finish(crawl.ExitBadContent, "unexpected HTTP "+resp.Status)
	}
}

// stored records a 2xx response's body: in the blob store, as a file
// row, and as file_text when it is text.
func (f *Fetcher) stored(ctx context.Context, cr *crawl.Crawl, res response, finish func(crawl.ExitCode, string) (crawl.Crawl, error)) (crawl.Crawl, error) {
	h := res.resp.Header
	ct := h.Get("Content-Type")
	mt := textenc.MediaType(ct)
	if mt == "" || mt == "application/octet-stream" || mt == "text/plain" && looksHTML(res.body) {
		mt = textenc.MediaType(http.DetectContentType(res.body))
	}
	key := crawl.BodyKey(res.body)
	if err := f.blobs.Put(ctx, key, res.body); err != nil {
		return *cr, fmt.Errorf("store body of %s: %w", cr.Log.URL, err)
	}
	size := int64(len(res.body))
	file := &crawl.File{
		URL: cr.Log.URL, LastModified: res.req.ServerLastModified, FileSize: &size, MIMEType: mt, BodyKey: key,
		ContentType: ct, ContentLanguage: h.Get("Content-Language"), RobotsTag: strings.Join(h.Values("X-Robots-Tag"), ", "),
	}
	cr.File = file
	if textenc.IsText(mt) {
		text, cs, err := textenc.Decode(res.body, ct)
		if err != nil {
			return finish(crawl.ExitBadContent, err.Error())
		}
		file.Charset = cs
		cr.FileText = &text
	}
	return finish(crawl.ExitComplete, "")
}

func looksHTML(b []byte) bool {
	return strings.HasPrefix(textenc.MediaType(http.DetectContentType(b)), "text/html")
}

// response is the result of one GET: either an outcome code (the request
// failed, or the body was too large) or a response with its body read.
type response struct {
	req  crawl.Request
	resp *http.Response
	body []byte
	code crawl.ExitCode
	msg  string
}

func (f *Fetcher) get(ctx context.Context, c crawl.Candidate) (response, error) {
	sent := f.now()
	r := response{req: crawl.Request{URL: c.URL, TimeSent: sent.Unix(), RobotsTxtApproved: true}}
	fail := func(code crawl.ExitCode, msg string) (response, error) {
		d := f.now().Sub(sent).Milliseconds()
		r.req.DurationMS, r.req.ExitCode, r.code, r.msg = &d, code, code, msg
		return r, nil
	}
	reqCtx, cancel := context.WithTimeout(ctx, f.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(reqCtx, http.MethodGet, c.URL, nil)
	if err != nil {
		return fail(crawl.ExitInvalidURL, err.Error())
	}
	req.Header.Set("User-Agent", f.cfg.UserAgent)
	req.Header.Set("Accept", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8")
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
		return fail(classify(err, f.cfg.Timeout))
	}
	defer resp.Body.Close()
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
		body, err := io.ReadAll(io.LimitReader(resp.Body, f.cfg.MaxResourceSize+1))
		if err != nil {
			if ctx.Err() != nil {
				return r, ctx.Err()
			}
			code, msg := classify(err, f.cfg.Timeout)
			return fail(code, "reading body: "+msg)
		}
		if int64(len(body)) > f.cfg.MaxResourceSize {
			return fail(crawl.ExitTooLarge, fmt.Sprintf("body larger than MaxResourceSize (%d bytes); cut off", f.cfg.MaxResourceSize))
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
	default:
		return crawl.ExitHTTPServerError
	}
}

// classify turns a transport error into an outcome.
func classify(err error, timeout time.Duration) (crawl.ExitCode, string) {
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout() {
		return crawl.ExitTimeout, fmt.Sprintf("no complete answer within %v", timeout)
	}
	var be *BlockedAddressError
	if errors.As(err, &be) {
		return crawl.ExitBlockedAddress, be.Error()
	}
	return crawl.ExitNetworkError, unwrapAll(err).Error()
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

// BlockedAddressError is returned by a dialer that refuses an address.
type BlockedAddressError struct {
	Host string
	IP   net.IP
}

func (e *BlockedAddressError) Error() string {
	return fmt.Sprintf("%s resolves to %s, which the fetcher refuses (private, loopback or link-local)", e.Host, e.IP)
}

// RobotsTag reads an X-Robots-Tag header value: the directives for all
// agents, and those addressed to the user agent's product token.
func RobotsTag(v, userAgent string) (nofollow, noindex bool) {
	token := strings.ToLower(strings.SplitN(userAgent, "/", 2)[0])
	for _, part := range strings.Split(strings.ToLower(v), ",") {
		part = strings.TrimSpace(part)
		if i := strings.Index(part, ":"); i >= 0 {
			agent := strings.TrimSpace(part[:i])
			if agent != token && !strings.ContainsAny(agent, " ") && agent != "none" && agent != "noindex" && agent != "nofollow" {
				continue
			}
			part = strings.TrimSpace(part[i+1:])
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
