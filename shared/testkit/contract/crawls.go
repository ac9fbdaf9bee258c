package contract

import (
	"errors"
	"reflect"
	"testing"

	"github.com/serverless-crawler/crawler/shared/crawl"
)

// crawls: RecordCrawl writes a crawl and its candidate's new state in
// one step, keyed by crawl_uuid (a redelivered crawl changes nothing),
// conditional on the candidate's version (a lost race writes nothing).
func crawls(t *testing.T, open Opener) {
	run(t, []testCase{
		{"Record", func(t *testing.T) { recordCrawl(t, open(t)) }},
		{"CountsCrawls", func(t *testing.T) {
			s := open(t)
			registerAgent(t, s)
			const u = "http://example.com/page"
			c := queuedCandidate(t, s, u, "crawl-1")
			for i, id := range []string{"crawl-1", "crawl-2", "crawl-3"} {
				cr := CompleteCrawl(u, id)
				next := CrawledAs(c, cr)
				if fresh, err := s.RecordCrawl(t.Context(), cr, &next); err != nil || !fresh {
					t.Fatalf("RecordCrawl %s = %v, %v", id, fresh, err)
				}
				c = mustGet(t, s, u)
				if n := mustStatus(t, s, u).Crawls; n != i+1 {
					t.Errorf("after %s: %d crawls, want %d", id, n, i+1)
				}
			}
			// A crawl decided before its request (too many redirects)
			// sent none, and is not counted.
			cr := FailedCrawl(u, "crawl-4")
			cr.Log.ExitCode, cr.Log.Message, cr.Requests = crawl.ExitTooManyRedirects, nil, nil
			next := CrawledAs(c, cr)
			if fresh, err := s.RecordCrawl(t.Context(), cr, &next); err != nil || !fresh {
				t.Fatalf("RecordCrawl crawl-4 = %v, %v", fresh, err)
			}
			c = mustGet(t, s, u)
			if n := mustStatus(t, s, u).Crawls; n != 3 {
				t.Errorf("after a too-many-redirects crawl: %d crawls, want 3", n)
			}
			// A later PutCandidate keeps the count.
			c.State = crawl.StateDue
			if err := s.PutCandidate(t.Context(), c); err != nil {
				t.Fatal(err)
			}
			if n := mustStatus(t, s, u).Crawls; n != 3 {
				t.Errorf("after PutCandidate: %d crawls, want 3", n)
			}
		}},
		{"Conflict", func(t *testing.T) { recordConflict(t, open) }},
		{"WithoutCandidate", func(t *testing.T) {
			s := open(t)
			registerAgent(t, s)
			cr := FailedCrawl("http://example.com/x", "crawl-x")
			var before Snapshot
			for i, want := range []bool{true, false} {
				fresh, err := s.RecordCrawl(t.Context(), cr, nil)
				if err != nil || fresh != want {
					t.Fatalf("RecordCrawl(nil candidate) #%d = %v, %v; want %v, nil", i+1, fresh, err, want)
				}
				if i == 0 {
					before = snapshot(t, s)
				}
			}
			unchanged(t, s, before, "a redelivered RecordCrawl without a candidate")
			if _, err := s.GetCandidate(t.Context(), cr.Log.URL); !errors.Is(err, crawl.ErrNotFound) {
				t.Errorf("a crawl recorded without a candidate created one: %v", err)
			}
			if got := mustGetCrawl(t, s, cr.Log.CrawlUUID); !reflect.DeepEqual(got, asRead(cr)) {
				t.Errorf("GetCrawl:\ngot  %+v\nwant %+v", got, asRead(cr))
			}
			if _, err := s.RecordCrawl(t.Context(), crawl.Crawl{}, nil); crawl.KindOf(err) != crawl.KindInvalid {
				t.Errorf("RecordCrawl without a crawl_uuid = %v, want a KindInvalid error", err)
			}
			unchanged(t, s, before, "a refused RecordCrawl")
		}},
		{"GetCrawl", func(t *testing.T) { getCrawl(t, open(t)) }},
		{"SetCanonicalURL", func(t *testing.T) {
			s := open(t)
			registerAgent(t, s)
			cr := CompleteCrawl("http://example.com/a", "c1")
			cr.File.CanonicalURL = nil
			noFile := FailedCrawl("http://example.com/f", "c2")
			for _, c := range []crawl.Crawl{cr, noFile} {
				if _, err := s.RecordCrawl(t.Context(), c, nil); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.SetCanonicalURL(t.Context(), "c1", "http://example.com/canon"); err != nil {
				t.Fatal(err)
			}
			want := asRead(cr)
			want.File.CanonicalURL = ptr("http://example.com/canon")
			if got := mustGetCrawl(t, s, "c1"); !reflect.DeepEqual(got, want) {
				t.Errorf("after SetCanonicalURL:\ngot  %+v\nwant %+v", got, want)
			}
			// A crawl without a file, or none at all: nothing happens.
			before := snapshot(t, s)
			for _, id := range []string{"c2", "no-such-crawl", ""} {
				if err := s.SetCanonicalURL(t.Context(), id, "http://example.com/canon"); err != nil {
					t.Errorf("SetCanonicalURL(%q) = %v, want nil", id, err)
				}
			}
			unchanged(t, s, before, "SetCanonicalURL of crawls without a file")
			if got := mustGetCrawl(t, s, "c2"); !reflect.DeepEqual(got, asRead(noFile)) {
				t.Errorf("crawl without a file changed: %+v", got)
			}
			if _, err := s.GetCrawl(t.Context(), "no-such-crawl"); !errors.Is(err, crawl.ErrNotFound) {
				t.Errorf("SetCanonicalURL made up a crawl: %v", err)
			}
		}},
	})
}

func recordCrawl(t *testing.T, s Metadata) {
	registerAgent(t, s)
	const u = "http://example.com/page"
	for _, tt := range []struct {
		name string
		cr   crawl.Crawl
	}{
		{"complete crawl with file and text", CompleteCrawl(u+"/complete", "crawl-1")},
		{"redirect", RedirectCrawl(u+"/redirect", "https://example.com/page", "crawl-2")},
		{"failed crawl: log and request only", FailedCrawl(u+"/failed", "crawl-3")},
		{"several requests", func() crawl.Crawl {
			cr := CompleteCrawl(u+"/retried", "crawl-4")
			cr.Requests = append([]crawl.Request{{URL: cr.Log.URL, TimeSent: 1700000099, RobotsTxtApproved: true,
				ExitCode: crawl.ExitHTTPServerError, HTTPStatusCode: ptr(503)}}, cr.Requests...)
			cr.File.CanonicalURL, cr.FileText = nil, nil
			return cr
		}()},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := queuedCandidate(t, s, tt.cr.Log.URL, tt.cr.Log.CrawlUUID)
			next := CrawledAs(c, tt.cr)
			fresh, err := s.RecordCrawl(t.Context(), tt.cr, &next)
			if err != nil || !fresh {
				t.Fatalf("RecordCrawl = %v, %v; want true, nil", fresh, err)
			}
			snap := crawlSnapshot(t, s, tt.cr)
			if !reflect.DeepEqual(snap.crawl, asRead(tt.cr)) {
				t.Errorf("GetCrawl:\ngot  %+v\nwant %+v", snap.crawl, asRead(tt.cr))
			}
			next.Version++
			if !reflect.DeepEqual(snap.candidate, next) {
				t.Errorf("candidate after RecordCrawl:\ngot  %+v\nwant %+v", snap.candidate, next)
			}
			if st := snap.status; st.Crawls != 1 || !reflect.DeepEqual(st.Message, tt.cr.Log.Message) || st.Frontier != crawl.StateCrawled {
				t.Errorf("status: %d crawls, message %v, frontier %s; want 1, %v, crawled", st.Crawls, st.Message, st.Frontier, tt.cr.Log.Message)
			}

			// Recording the same crawl again writes nothing, not even the
			// candidate, whether its version is current or stale.
			before := snapshot(t, s)
			for _, v := range []int64{next.Version, next.Version - 1} {
				again := next
				again.Priority, again.Version = 99, v
				fresh, err = s.RecordCrawl(t.Context(), tt.cr, &again)
				if err != nil || fresh {
					t.Fatalf("redelivered RecordCrawl (candidate version %d) = %v, %v; want false, nil", v, fresh, err)
				}
				if got := crawlSnapshot(t, s, tt.cr); !reflect.DeepEqual(got, snap) {
					t.Errorf("redelivered RecordCrawl changed something:\nbefore %+v\nafter  %+v", snap, got)
				}
				unchanged(t, s, before, "a redelivered RecordCrawl")
			}
		})
	}
}

// crawlState is what a store shows of a crawl and its URL.
type crawlState struct {
	crawl     crawl.Crawl
	candidate crawl.Candidate
	status    crawl.URLStatus
}

func crawlSnapshot(t *testing.T, s Metadata, cr crawl.Crawl) crawlState {
	t.Helper()
	return crawlState{mustGetCrawl(t, s, cr.Log.CrawlUUID), mustGet(t, s, cr.Log.URL), mustStatus(t, s, cr.Log.URL)}
}

func recordConflict(t *testing.T, open Opener) {
	const u = "http://example.com/page"
	for _, tt := range []struct {
		name      string
		candidate func(stored crawl.Candidate) crawl.Candidate
	}{
		{"stale candidate version", func(c crawl.Candidate) crawl.Candidate { c.Version--; return c }},
		{"candidate written meanwhile by someone else", func(c crawl.Candidate) crawl.Candidate { c.Version = 0; return c }},
		{"version from the future", func(c crawl.Candidate) crawl.Candidate { c.Version += 3; return c }},
		{"candidate deleted meanwhile", func(c crawl.Candidate) crawl.Candidate { c.URL += "/gone"; return c }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := open(t)
			registerAgent(t, s)
			c := queuedCandidate(t, s, u, "crawl-1")
			// Someone else updates the candidate (version 1 -> 2).
			c.Priority = 1
			if err := s.PutCandidate(t.Context(), c); err != nil {
				t.Fatal(err)
			}
			stored := mustGet(t, s, u)
			cr := CompleteCrawl(u, "crawl-1")
			next := CrawledAs(tt.candidate(stored), cr)
			before := snapshot(t, s)
			fresh, err := s.RecordCrawl(t.Context(), cr, &next)
			unchanged(t, s, before, "a lost RecordCrawl")
			if !errors.Is(err, crawl.ErrConflict) || crawl.KindOf(err) != crawl.KindConflict || fresh {
				t.Fatalf("RecordCrawl = %v, %v; want false, ErrConflict", fresh, err)
			}
			if got := mustGet(t, s, u); !reflect.DeepEqual(got, stored) {
				t.Errorf("candidate changed:\nbefore %+v\nafter  %+v", stored, got)
			}
			if _, err := s.GetCandidate(t.Context(), next.URL); next.URL != u && !errors.Is(err, crawl.ErrNotFound) {
				t.Errorf("the lost write created %s: %v", next.URL, err)
			}
			if n := mustStatus(t, s, u).Crawls; n != 0 {
				t.Errorf("%d crawls counted, want 0", n)
			}
			if _, err := s.GetCrawl(t.Context(), "crawl-1"); !errors.Is(err, crawl.ErrNotFound) {
				t.Errorf("GetCrawl after a lost RecordCrawl: %v, want ErrNotFound", err)
			}
			// Re-read and retry, as the fetch stage does: it goes through.
			next = CrawledAs(stored, cr)
			if fresh, err := s.RecordCrawl(t.Context(), cr, &next); err != nil || !fresh {
				t.Errorf("retry after re-read = %v, %v; want true, nil", fresh, err)
			}
		})
	}
}

func getCrawl(t *testing.T, s Metadata) {
	registerAgent(t, s)
	for _, tt := range []struct {
		name string
		cr   crawl.Crawl
	}{
		{"complete", CompleteCrawl("http://example.com/a", "c-complete")},
		{"complete, no optional file fields", func() crawl.Crawl {
			cr := CompleteCrawl("http://example.com/b", "c-bare")
			cr.File = &crawl.File{URL: cr.Log.URL, MIMEType: "application/pdf", BodyKey: "raw/ab/cdef"}
			cr.FileText = nil
			cr.Requests[0].DurationMS, cr.Requests[0].ServerLastModified, cr.Requests[0].HTTPETag = nil, nil, nil
			return cr
		}()},
		{"empty ETag and message kept", func() crawl.Crawl {
			cr := CompleteCrawl("http://example.com/e", "c-empty")
			cr.Requests[0].HTTPETag, cr.Log.Message = ptr(""), ptr("")
			return cr
		}()},
		{"redirect", RedirectCrawl("http://example.com/r", "http://example.org/", "c-redirect")},
		{"redirect by security policy, from a meta tag", func() crawl.Crawl {
			cr := RedirectCrawl("http://example.com/m", "https://example.com/m", "c-meta")
			cr.Redirect.InformationSource, cr.Redirect.IsPermanent, cr.Redirect.BySecurityPolicy = crawl.SourceHTMLMeta, false, true
			cr.Redirect.LastModified = nil
			return cr
		}()},
		{"failed", FailedCrawl("http://example.com/f", "c-failed")},
		{"no requests", func() crawl.Crawl {
			cr := FailedCrawl("http://example.com/n", "c-none")
			cr.Requests = nil
			cr.Log.ExitCode = crawl.ExitRobotsDisallowed
			return cr
		}()},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := s.RecordCrawl(t.Context(), tt.cr, nil); err != nil {
				t.Fatal(err)
			}
			if got := mustGetCrawl(t, s, tt.cr.Log.CrawlUUID); !reflect.DeepEqual(got, asRead(tt.cr)) {
				t.Errorf("GetCrawl:\ngot  %+v\nwant %+v", got, asRead(tt.cr))
			}
		})
	}
	for _, id := range []string{"no-such-crawl", ""} {
		if _, err := s.GetCrawl(t.Context(), id); !errors.Is(err, crawl.ErrNotFound) || crawl.KindOf(err) != crawl.KindNotFound {
			t.Errorf("GetCrawl(%q) = %v, want ErrNotFound", id, err)
		}
	}
}
