package dynamo

import (
	"context"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/serverless-crawler/crawler/shared/aws/itemsize"
	"github.com/serverless-crawler/crawler/shared/crawl"
)

// A crawl log item is one crawl: seed 000's crawl_log row with its
// request rows (a list of maps), its file row (with the file_body
// columns), file_text and redirect row, under the seeds' column names.
// URLs and MIME types are stored by value, not by id, and the rows have
// no ids: crawl.Crawl's ID fields read back as 0. DynamoDB deletes the
// item some time after expires_at (TTLAttribute), set to the recording
// time plus the crawl log retention.
const (
	clCrawlUUID    = "crawl_uuid"
	clURL          = "url"
	clCrawlType    = "crawl_type"
	clAgentUUID    = "agent_uuid"
	clTimeStarted  = "time_started_unix_utc"
	clTimeTaken    = "time_taken_ms"
	clExitCode     = "exit_code"
	clMessage      = "message"
	clRequests     = "requests"
	clFile         = "file"
	clFileText     = "file_text"
	clFileTextCut  = "file_text_truncated"
	clRedirect     = "redirect"
	clTimeSent     = "time_sent_unix_utc"
	clDurationMS   = "request_duration_ms"
	clRobotsOK     = "robotstxt_approved"
	clServerLM     = "server_last_modified_unix_utc"
	clHTTPStatus   = "http_status_code"
	clHTTPETag     = "http_etag"
	clLastModified = "last_modified_unix_utc"
	clFileSize     = "file_size"
	clMIMEType     = "mimetype"
	clCanonical    = "canonical_url"
	clBodyKey      = "body_key"
	clBodySHA256   = "body_sha256"
	clCharset      = "charset"
	clContentType  = "content_type"
	clContentLang  = "content_language"
	clRobotsTag    = "x_robots_tag"
	clToURL        = "to_url"
	clInfoSource   = "information_source"
	clPermanent    = "is_permanent"
	clBySecurity   = "by_security_policy"
)

// MaxFileText is the most bytes of a file's text a crawl log item keeps
// (cut at a character boundary, with file_text_truncated set): its head,
// to tell what a crawl saw at a glance. Nothing reads the text back from
// the log (the later stages read the body from S3, where all of it is),
// and write units grow with it. At 64 KiB, as once, a 32 KiB page cost
// 54 write units, $34 per million pages (BENCHMARKS.md). The text kept
// is also never more than fits in the write units the item takes
// without it (fitText): on the documentation tree a 1 KiB head made
// most items two units instead of one.
const MaxFileText = 1 << 10

// writeUnitBytes is what one DynamoDB write unit writes.
const writeUnitBytes = 1024

// fitText returns the head of text that item can hold without taking
// another write unit (at most MaxFileText bytes, cut at a character
// boundary), and whether it cut.
func fitText(item map[string]types.AttributeValue, text string) (string, bool) {
	size := itemsize.Of(item) + len(clFileText) + len(clFileTextCut) + 1
	room := (writeUnitBytes - size%writeUnitBytes) % writeUnitBytes
	return fxTruncate(text, min(room, MaxFileText))
}

// RecordCrawl writes a crawl (its crawl log item) and, when c is not
// nil, the candidate's new state. A crawl whose crawl_uuid is already
// recorded is left as it is and RecordCrawl returns false, writing
// nothing; a candidate changed since it was read (its version is not
// c.Version) is crawl.ErrConflict and nothing is written. The
// candidate's crawls counter goes up by one with the crawl.
//
// The two items are two conditional writes in order, not a transaction,
// which DynamoDB bills twice (9.9 write units a page on the
// documentation tree, where the two writes cost about half). First the
// candidate, on its version and on not already holding this crawl
// (recorded_crawl_uuid); then the crawl log item, on not existing. A
// process killed between the two leaves the candidate showing the crawl
// and no log item: the fetch stage then fetches the URL again, and this
// RecordCrawl, finding the candidate written, writes the log item alone
// (fetch.Fetcher.Handle). Under redelivery the candidate's condition
// fails and nothing is written, as before.
//
// Unlike the SQLite store it does not check that the crawl's agent is
// registered: that would be a third item in every write.
func (d *DB) RecordCrawl(ctx context.Context, cr crawl.Crawl, c *crawl.Candidate) (bool, error) {
	fresh, err := d.recordCrawl(ctx, cr, c)
	if err != nil {
		return false, fmt.Errorf("record crawl %s of %s: %w", cr.Log.CrawlUUID, cr.Log.URL, err)
	}
	return fresh, nil
}

func (d *DB) recordCrawl(ctx context.Context, cr crawl.Crawl, c *crawl.Candidate) (bool, error) {
	if cr.Log.CrawlUUID == "" {
		return false, crawl.E("record crawl", crawl.KindInvalid, errors.New("no crawl_uuid"))
	}
	if c == nil {
		// Recorded alone (its candidate moved on to a newer crawl): it
		// was a request to the URL, and counts on the URL's site, read
		// from the candidate only when the log item is new (rare).
		fresh, err := d.putCrawlLog(ctx, cr)
		if err != nil || !fresh {
			return fresh, err
		}
		item, err := d.candidateItem(ctx, cr.Log.URL)
		if err != nil {
			return true, err
		}
		r := fxReader{m: item}
		if site := r.str(caSiteID); site != "" {
			return true, d.countSiteCrawl(ctx, site, cr)
		}
		return true, nil
	}
	// Only a crawl that sent a request counts (crawl.URLStatus.Crawls).
	upd, err := d.candidateUpdate(ctx, *c, &cr.Log, "")
	if err != nil {
		return false, err
	}
	upd.ReturnValuesOnConditionCheckFailure = types.ReturnValuesOnConditionCheckFailureAllOld
	_, err = d.api.UpdateItem(ctx, upd)
	var refused *types.ConditionalCheckFailedException
	switch {
	case errors.As(err, &refused):
		old := refused.Item
		if len(old) == 0 {
			// An endpoint that does not send the item back is asked.
			if old, err = d.candidateItem(ctx, c.URL); err != nil {
				return false, err
			}
		}
		r := fxReader{m: old}
		if rec := r.optStr(caRecorded); rec != nil && *rec == cr.Log.CrawlUUID {
			// The candidate holds this crawl: a redelivery (the log
			// item is there, and the put below writes nothing), or a
			// process killed before its log write (the put writes it,
			// and the site's counters, which come after it, count it).
			return d.logAndCount(ctx, cr, c.SiteID)
		}
		// The candidate moved on. A crawl recorded before (without its
		// candidate) wins over the changed candidate, as in the SQLite store.
		recorded, err := d.crawlRecorded(ctx, cr.Log.CrawlUUID)
		if err != nil {
			return false, err
		}
		if recorded {
			return false, nil
		}
		return false, fmt.Errorf("candidate %s (version %d): %w", c.URL, c.Version, crawl.ErrConflict)
	case fxLostRace(err):
		return false, fmt.Errorf("%w: %v", crawl.ErrConflict, err)
	case err != nil:
		return false, fmt.Errorf("update candidate: %w", err)
	}
	return d.logAndCount(ctx, cr, c.SiteID)
}

// logAndCount writes a crawl's log item and, if it was not there and
// the URL is a site's, counts the crawl on the site.
func (d *DB) logAndCount(ctx context.Context, cr crawl.Crawl, siteID string) (bool, error) {
	fresh, err := d.putCrawlLog(ctx, cr)
	if err != nil || !fresh {
		return fresh, err
	}
	if siteID != "" {
		// The site's counters: a crawl redelivered after this write
		// and before its answer would count twice, the price of not
		// holding the site item in every write.
		if err := d.countSiteCrawl(ctx, siteID, cr); err != nil {
			return true, err
		}
	}
	return true, nil
}

// putCrawlLog writes a crawl's log item unless its crawl_uuid has one,
// and reports whether it did.
func (d *DB) putCrawlLog(ctx context.Context, cr crawl.Crawl) (bool, error) {
	_, err := d.api.PutItem(ctx, &dynamodb.PutItemInput{
		TableName:                aws.String(d.t.CrawlLog),
		Item:                     d.crawlLogItem(cr),
		ConditionExpression:      aws.String("attribute_not_exists(#k)"),
		ExpressionAttributeNames: map[string]string{"#k": clCrawlUUID},
	})
	if conditionFailed(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("put crawl log item: %w", err)
	}
	return true, nil
}

// candidateItem reads a candidate's item, consistently.
func (d *DB) candidateItem(ctx context.Context, u string) (map[string]types.AttributeValue, error) {
	out, err := d.api.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:      aws.String(d.t.Candidates),
		Key:            map[string]types.AttributeValue{caURL: fxS(u)},
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return nil, fmt.Errorf("read candidate: %w", err)
	}
	return out.Item, nil
}

// unchanged reads u's last 304s as RecordCrawl noted them on the
// candidate (caUnchangedAt): for the last one, and the last one before
// the last contentful crawl, when it started and when the contentful
// crawl whose content it confirmed did. An eventually consistent read is
// half a read unit; a 304 it does not see yet only costs a write of the
// head (extendOpen) or shows a last_seen a moment old.
func (d *DB) unchanged(ctx context.Context, u string, consistent bool) ([]unchangedMark, error) {
	if !keyable(u) {
		return nil, nil
	}
	out, err := d.api.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:                aws.String(d.t.Candidates),
		Key:                      map[string]types.AttributeValue{caURL: fxS(u)},
		ConsistentRead:           aws.Bool(consistent),
		ProjectionExpression:     aws.String("#a, #o, #pa, #po"),
		ExpressionAttributeNames: map[string]string{"#a": caUnchangedAt, "#o": caUnchangedOf, "#pa": caUnchangedPrevAt, "#po": caUnchangedPrevOf},
	})
	if err != nil {
		return nil, fmt.Errorf("read when %s last answered 304: %w", u, err)
	}
	marks, err := unchangedMarks(out.Item)
	if err != nil {
		return nil, fmt.Errorf("candidate %s: %w", u, err)
	}
	return marks, nil
}

// unchangedMarks reads the 304s noted on a candidate item.
func unchangedMarks(item map[string]types.AttributeValue) ([]unchangedMark, error) {
	r := fxReader{m: item}
	var marks []unchangedMark
	for _, k := range [][2]string{{caUnchangedAt, caUnchangedOf}, {caUnchangedPrevAt, caUnchangedPrevOf}} {
		if at, of := r.optInt(k[0]), r.optInt(k[1]); at != nil && of != nil && *at > 0 && *of > 0 {
			marks = append(marks, unchangedMark{At: *at, Of: *of})
		}
	}
	return marks, r.err
}

// unchangedMark is a 304 noted on a candidate: when it started (At), and
// when the contentful crawl whose content it confirmed started (Of).
type unchangedMark struct{ At, Of int64 }

// lastAt is when the last of marks started, 0 for none.
func lastAt(marks []unchangedMark) int64 {
	var at int64
	for _, m := range marks {
		at = max(at, m.At)
	}
	return at
}

// crawlRecorded reports whether a crawl log item exists.
func (d *DB) crawlRecorded(ctx context.Context, crawlUUID string) (bool, error) {
	out, err := d.api.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:                aws.String(d.t.CrawlLog),
		Key:                      map[string]types.AttributeValue{clCrawlUUID: fxS(crawlUUID)},
		ConsistentRead:           aws.Bool(true),
		ProjectionExpression:     aws.String("#k"),
		ExpressionAttributeNames: map[string]string{"#k": clCrawlUUID},
	})
	if err != nil {
		return false, fmt.Errorf("look up crawl: %w", err)
	}
	return len(out.Item) > 0, nil
}

// crawlLogItem is the crawl log item of a crawl.
func (d *DB) crawlLogItem(cr crawl.Crawl) map[string]types.AttributeValue {
	l := cr.Log
	it := map[string]types.AttributeValue{
		clCrawlUUID:   fxS(l.CrawlUUID),
		clAgentUUID:   fxS(l.AgentUUID),
		clURL:         fxS(l.URL),
		clCrawlType:   fxN(int64(l.CrawlType)),
		clTimeStarted: fxN(l.TimeStarted),
		clTimeTaken:   fxN(l.TimeTakenMS),
		clExitCode:    fxN(int64(l.ExitCode)),
		TTLAttribute:  fxN(d.now().Add(d.logTTL).Unix()),
	}
	fxPutOpt(it, clMessage, fxOptS(l.Message))
	if len(cr.Requests) > 0 {
		reqs := make([]types.AttributeValue, len(cr.Requests))
		for i, r := range cr.Requests {
			m := map[string]types.AttributeValue{
				clURL:      fxS(r.URL),
				clTimeSent: fxN(r.TimeSent),
				clRobotsOK: fxBool(r.RobotsTxtApproved),
				clExitCode: fxN(int64(r.ExitCode)),
			}
			fxPutOpt(m, clDurationMS, fxOptN(r.DurationMS))
			fxPutOpt(m, clServerLM, fxOptN(r.ServerLastModified))
			if r.HTTPStatusCode != nil {
				m[clHTTPStatus] = fxN(int64(*r.HTTPStatusCode))
			}
			fxPutOpt(m, clHTTPETag, fxOptS(r.HTTPETag))
			reqs[i] = &types.AttributeValueMemberM{Value: m}
		}
		it[clRequests] = &types.AttributeValueMemberL{Value: reqs}
	}
	if f := cr.File; f != nil {
		m := map[string]types.AttributeValue{
			clURL:      fxS(f.URL),
			clMIMEType: fxS(f.MIMEType),
			clBodyKey:  fxS(f.BodyKey),
		}
		fxPutOpt(m, clLastModified, fxOptN(f.LastModified))
		fxPutOpt(m, clFileSize, fxOptN(f.FileSize))
		fxPutOpt(m, clCanonical, fxOptS(f.CanonicalURL))
		fxPutOpt(m, clBodySHA256, fxNonEmpty(f.BodySHA256))
		fxPutOpt(m, clCharset, fxNonEmpty(f.Charset))
		fxPutOpt(m, clContentType, fxNonEmpty(f.ContentType))
		fxPutOpt(m, clContentLang, fxNonEmpty(f.ContentLanguage))
		fxPutOpt(m, clRobotsTag, fxNonEmpty(f.RobotsTag))
		it[clFile] = &types.AttributeValueMemberM{Value: m}
	}
	if r := cr.Redirect; r != nil {
		m := map[string]types.AttributeValue{
			clURL:        fxS(r.URL),
			clToURL:      fxS(r.ToURL),
			clInfoSource: fxN(int64(r.InformationSource)),
			clPermanent:  fxBool(r.IsPermanent),
			clBySecurity: fxBool(r.BySecurityPolicy),
		}
		fxPutOpt(m, clLastModified, fxOptN(r.LastModified))
		it[clRedirect] = &types.AttributeValueMemberM{Value: m}
	}
	// As in the SQLite store, a file's text is kept only with its file;
	// last, so that it takes only the room the rest leaves.
	if cr.File != nil && cr.FileText != nil {
		text, cut := fitText(it, *cr.FileText)
		it[clFileText] = fxS(text)
		if cut {
			it[clFileTextCut] = fxBool(true)
		}
	}
	return it
}

// fxTruncate cuts s to at most n bytes without splitting a character,
// and reports whether it cut.
func fxTruncate(s string, n int) (string, bool) {
	if len(s) <= n {
		return s, false
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i], true
}

// GetCrawl reads back a recorded crawl (without file_text, as the SQLite
// store), or crawl.ErrNotFound; its ID fields are 0. The read is
// strongly consistent.
func (d *DB) GetCrawl(ctx context.Context, crawlUUID string) (crawl.Crawl, error) {
	if crawlUUID == "" {
		return crawl.Crawl{}, crawl.ErrNotFound
	}
	names := map[string]string{}
	proj := ""
	for i, a := range []string{clCrawlUUID, clAgentUUID, clURL, clCrawlType, clTimeStarted, clTimeTaken,
		clExitCode, clMessage, clRequests, clFile, clRedirect} {
		p := fmt.Sprintf("#a%d", i)
		names[p] = a
		if proj != "" {
			proj += ", "
		}
		proj += p
	}
	out, err := d.api.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:                aws.String(d.t.CrawlLog),
		Key:                      map[string]types.AttributeValue{clCrawlUUID: fxS(crawlUUID)},
		ConsistentRead:           aws.Bool(true),
		ProjectionExpression:     aws.String(proj),
		ExpressionAttributeNames: names,
	})
	if err != nil {
		return crawl.Crawl{}, fmt.Errorf("get crawl %s: %w", crawlUUID, err)
	}
	if len(out.Item) == 0 {
		return crawl.Crawl{}, crawl.ErrNotFound
	}
	cr, err := decodeCrawlLog(out.Item)
	if err != nil {
		return cr, fmt.Errorf("get crawl %s: %w", crawlUUID, err)
	}
	return cr, nil
}

// decodeCrawlLog reads a crawl log item (but its file_text).
func decodeCrawlLog(it map[string]types.AttributeValue) (crawl.Crawl, error) {
	var cr crawl.Crawl
	r := fxReader{m: it}
	cr.Log = crawl.CrawlLog{
		AgentUUID:   r.str(clAgentUUID),
		URL:         r.str(clURL),
		CrawlType:   crawl.CrawlType(r.int(clCrawlType)),
		CrawlUUID:   r.str(clCrawlUUID),
		TimeStarted: r.int(clTimeStarted),
		TimeTakenMS: r.int(clTimeTaken),
		ExitCode:    crawl.ExitCode(r.int(clExitCode)),
		Message:     r.optStr(clMessage),
	}
	for _, m := range r.maps(clRequests) {
		q := fxReader{m: m}
		cr.Requests = append(cr.Requests, crawl.Request{
			URL:                q.str(clURL),
			TimeSent:           q.int(clTimeSent),
			DurationMS:         q.optInt(clDurationMS),
			RobotsTxtApproved:  q.bool(clRobotsOK),
			ExitCode:           crawl.ExitCode(q.int(clExitCode)),
			ServerLastModified: q.optInt(clServerLM),
			HTTPStatusCode:     q.optIntAsInt(clHTTPStatus),
			HTTPETag:           q.optStr(clHTTPETag),
		})
		if q.err != nil {
			return cr, fmt.Errorf("decode request: %w", q.err)
		}
	}
	if m := r.mapAttr(clFile); m != nil {
		f := fxReader{m: m}
		cr.File = &crawl.File{
			URL:             f.str(clURL),
			LastModified:    f.optInt(clLastModified),
			FileSize:        f.optInt(clFileSize),
			MIMEType:        f.str(clMIMEType),
			CanonicalURL:    f.optStr(clCanonical),
			BodyKey:         f.str(clBodyKey),
			BodySHA256:      f.str(clBodySHA256),
			Charset:         f.str(clCharset),
			ContentType:     f.str(clContentType),
			ContentLanguage: f.str(clContentLang),
			RobotsTag:       f.str(clRobotsTag),
		}
		if f.err != nil {
			return cr, fmt.Errorf("decode file: %w", f.err)
		}
	}
	if m := r.mapAttr(clRedirect); m != nil {
		rd := fxReader{m: m}
		cr.Redirect = &crawl.Redirect{
			URL:               rd.str(clURL),
			LastModified:      rd.optInt(clLastModified),
			ToURL:             rd.str(clToURL),
			InformationSource: crawl.InformationSource(rd.int(clInfoSource)),
			IsPermanent:       rd.bool(clPermanent),
			BySecurityPolicy:  rd.bool(clBySecurity),
		}
		if rd.err != nil {
			return cr, fmt.Errorf("decode redirect: %w", rd.err)
		}
	}
	if r.err != nil {
		return cr, fmt.Errorf("decode crawl: %w", r.err)
	}
	return cr, nil
}

// SetCanonicalURL sets the canonical URL of a crawl's file. A crawl
// that is not recorded, or has no file, is left alone (as in the SQLite
// store).
func (d *DB) SetCanonicalURL(ctx context.Context, crawlUUID, canonical string) error {
	if crawlUUID == "" {
		return nil
	}
	_, err := d.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(d.t.CrawlLog),
		Key:                       map[string]types.AttributeValue{clCrawlUUID: fxS(crawlUUID)},
		UpdateExpression:          aws.String("SET #f.#c = :c"),
		ConditionExpression:       aws.String("attribute_exists(#f)"),
		ExpressionAttributeNames:  map[string]string{"#f": clFile, "#c": clCanonical},
		ExpressionAttributeValues: map[string]types.AttributeValue{":c": fxS(canonical)},
	})
	if err != nil && !conditionFailed(err) {
		return fmt.Errorf("set canonical URL of crawl %s: %w", crawlUUID, err)
	}
	return nil
}
