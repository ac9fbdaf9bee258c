package dynamo

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/serverless-crawler/crawler/shared/crawl"
)

// A candidate item holds seed 000's crawl_candidate columns under their
// names, the frontier fields under the SQLite crawl_frontier names, the
// version for conditional writes and the crawls counter. Optional fields
// (nil pointers, empty strings, an empty redirect chain) are absent.
//
// The GSI keys are copies kept only in the state they index, so the
// index holds just the due candidates (and a site's held ones, site.go):
//
//	due_host, due_at         = host, due_unix_utc     while state = due
//
// A queued candidate is in no index: its release record finds it
// (released.go).
const (
	caURL               = "url"
	caLastCrawlTime     = "last_crawl_time_unix_utc"
	caLastCrawlExit     = "last_crawl_exit_code"
	caLastContentful    = "last_contentful_crawl_time_unix_utc"
	caLastContentfulTag = "last_contentful_http_etag"
	caHost              = "host"
	caState             = "state"
	caHops              = "hops"
	caPriority          = "priority"
	caDue               = "due_unix_utc"
	caCrawlType         = "crawl_type"
	caCrawlUUID         = "crawl_uuid"
	caQueued            = "queued_unix_utc"
	caLastCfModified    = "last_contentful_modified_unix_utc"
	caNRedirs           = "n_redirs"
	caOrigURL           = "orig_url"
	caRedirectChain     = "redirect_chain"
	caDiscovered        = "discovered_unix_utc"
	caParent            = "parent_url"
	caMaxDepth          = "max_depth"
	caSiteID            = "site_id"
	caMRate             = "mrate"
	caMRateCounter      = "mrate_counter"
	caRecrawlEvery      = "recrawl_every"
	caVersion           = "version"
	caCrawls            = "crawls"
	caDueHost           = "due_host"
	caDueAt             = "due_at"
	// The crawl_uuid of the last crawl RecordCrawl wrote into the
	// candidate: a redelivered RecordCrawl finds it and writes nothing.
	caRecorded = "recorded_crawl_uuid"
	// The last crawl of the URL that answered 304 Not Modified: when it
	// started, and when the contentful crawl whose content it confirmed
	// started (the candidate's last contentful crawl then). RecordCrawl
	// writes them with the crawl; they extend the generation that
	// contentful crawl opened or extended (genItem.withUnchanged), so
	// that the head item is not written for an unchanged page
	// (docs/aws.md, "Functions and queues").
	caUnchangedAt = "unchanged_at"
	caUnchangedOf = "unchanged_of"
	// The pair above as it was before the last contentful crawl was
	// recorded: a 304 recorded after that crawl and before its summary
	// must not take the extension of the generation it closes.
	caUnchangedPrevAt = "unchanged_prev_at"
	caUnchangedPrevOf = "unchanged_prev_of"
	// A random token each PutCandidate writes, so that a write refused
	// on the SDK's retry can tell its own applied attempt (the item holds
	// its token) from another writer's identical write, such as a second
	// copy of the same links message (ownWrite).
	caWriteID = "write_id"
)

// maxKeyBytes is the most bytes DynamoDB takes in a partition key. The
// candidates and the generations are keyed by URL, and the scheduler
// keeps no URL longer than crawl.MaxKeptURLLength; the array's length
// turns negative, and the build fails, if that ever outgrows the key.
const maxKeyBytes = 2048

var _ [maxKeyBytes - crawl.MaxKeptURLLength]struct{}

// keyable reports whether u can be a candidate's or a generation's key.
// A lookup by any other URL (empty, or too long: a canonical link a page
// names, a URL a user asks about) finds nothing, as it would in the
// SQLite store, rather than having DynamoDB refuse the request.
func keyable(u string) bool { return u != "" && len(u) <= maxKeyBytes }

// GetCandidate returns the candidate for a normalized URL, or
// crawl.ErrNotFound. The read is strongly consistent: its version is the
// one a conditional PutCandidate will be checked against.
func (d *DB) GetCandidate(ctx context.Context, u string) (crawl.Candidate, error) {
	r, err := d.getCandidate(ctx, u)
	return r.c, err
}

// CrawlCount returns how many crawls RecordCrawl recorded with the URL's
// candidate (what `crawler status` reports as crawls), or
// crawl.ErrNotFound when the URL has no candidate.
func (d *DB) CrawlCount(ctx context.Context, u string) (int, error) {
	r, err := d.getCandidate(ctx, u)
	return r.crawls, err
}

// candidateRead is a candidate item as read: the candidate, its crawls
// counter and the 304s RecordCrawl noted on it.
type candidateRead struct {
	c         crawl.Candidate
	crawls    int
	unchanged []unchangedMark
}

// getCandidate reads a candidate item, consistently.
func (d *DB) getCandidate(ctx context.Context, u string) (candidateRead, error) {
	if !keyable(u) {
		return candidateRead{}, crawl.ErrNotFound
	}
	out, err := d.api.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:      aws.String(d.t.Candidates),
		Key:            map[string]types.AttributeValue{caURL: fxS(u)},
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return candidateRead{}, fmt.Errorf("get candidate %s: %w", u, err)
	}
	if len(out.Item) == 0 {
		return candidateRead{}, crawl.ErrNotFound
	}
	var r candidateRead
	if r.c, err = decodeCandidate(out.Item); err != nil {
		return r, fmt.Errorf("get candidate %s: %w", u, err)
	}
	n, err := fxReadN(out.Item, caCrawls)
	if err != nil {
		return r, fmt.Errorf("get candidate %s: %w", u, err)
	}
	r.crawls = int(n)
	if r.unchanged, err = unchangedMarks(out.Item); err != nil {
		return r, fmt.Errorf("get candidate %s: %w", u, err)
	}
	return r, nil
}

// PutCandidate writes c if the stored version is still c.Version (0: the
// candidate must not exist yet), else returns crawl.ErrConflict. On
// success c.Version+1 is the stored version. It is an UpdateItem, not a
// PutItem, so that the crawls counter survives.
//
// A candidate written as queued (released to fetch) gets its release
// record first (released.go).
func (d *DB) PutCandidate(ctx context.Context, c crawl.Candidate) error {
	return d.PutCandidates(ctx, []crawl.Candidate{c})[0]
}

// putCandidate is PutCandidate once the release record is written.
func (d *DB) putCandidate(ctx context.Context, c crawl.Candidate) error {
	writeID := newWriteID()
	in, err := d.candidateUpdate(ctx, c, nil, writeID)
	if err != nil {
		return fmt.Errorf("put candidate %s: %w", c.URL, err)
	}
	// A URL its site collects is counted (its MaxURLs): a new one not
	// filtered out, or a filtered one admitted after all, which the old
	// state tells.
	admitted := c.SiteID != "" && (c.State == crawl.StateDue || c.State == crawl.StateHeld)
	if admitted && c.Version != 0 {
		in.ReturnValues = types.ReturnValueUpdatedOld
	}
	in.ReturnValuesOnConditionCheckFailure = types.ReturnValuesOnConditionCheckFailureAllOld
	var tries attempts
	out, err := d.api.UpdateItem(ctx, in, tries.option)
	wasFiltered := false
	var refused *types.ConditionalCheckFailedException
	switch {
	case errors.As(err, &refused) && tries.retried():
		own, err := d.ownWrite(ctx, c.URL, refused.Item, writeID)
		if err != nil {
			return fmt.Errorf("put candidate %s: %w", c.URL, err)
		}
		if !own {
			return fmt.Errorf("put candidate %s (version %d): %w", c.URL, c.Version, crawl.ErrConflict)
		}
		// Our own write, applied by an attempt whose answer was lost.
		// The state it replaced is not known, so a filtered URL
		// admitted after all is not counted toward its site's MaxURLs
		// (each time this happens, which takes a lost answer).
	case fxLostRace(err):
		return fmt.Errorf("put candidate %s (version %d): %w", c.URL, c.Version, crawl.ErrConflict)
	case err != nil:
		return fmt.Errorf("put candidate %s: %w", c.URL, err)
	default:
		if old, ok := out.Attributes[caState].(*types.AttributeValueMemberS); ok {
			wasFiltered = old.Value == string(crawl.StateFiltered)
		}
	}
	if c.SiteID != "" && c.Version == 0 && c.State != crawl.StateFiltered || admitted && wasFiltered {
		if err := d.countSiteURL(ctx, c.SiteID, c.DiscoveredAt); err != nil {
			return afterWrite{fmt.Errorf("put candidate %s: %w", c.URL, err)}
		}
	}
	return nil
}

// afterWrite is the error of a step after a candidate's write applied
// (its site's count): the candidate is written, so a release keeps its
// record, and StaleQueued releases it again if its fetch task is never
// sent. (Dropping the record, as for a write that failed, left a queued
// candidate that nothing would ever send.)
type afterWrite struct{ err error }

func (e afterWrite) Error() string { return e.err.Error() }
func (e afterWrite) Unwrap() error { return e.err }

// written reports whether a candidate write that returned err applied.
func written(err error) bool {
	var aw afterWrite
	return err == nil || errors.As(err, &aw)
}

// ownWrite tells a retried candidate write, refused, that its earlier
// attempt applied (its answer lost) from one that lost to another writer
// meanwhile: the stored item holds its write_id, which no other write
// has (another copy of the same message writes the same values, under
// its own write_id). item is what the refusal sent back; an endpoint
// that sends nothing is asked.
func (d *DB) ownWrite(ctx context.Context, url string, item map[string]types.AttributeValue, writeID string) (bool, error) {
	if len(item) == 0 {
		var err error
		if item, err = d.candidateItem(ctx, url); err != nil {
			return false, err
		}
	}
	got, ok := item[caWriteID].(*types.AttributeValueMemberS)
	return ok && got.Value == writeID, nil
}

// putsAtOnce is how many of PutCandidates' writes are in flight at once:
// a page's hundred new links take a few round trips, not a hundred.
const putsAtOnce = 16

// PutCandidates writes each candidate as PutCandidate does, putsAtOnce
// at a time, and returns each one's error. DynamoDB has no conditional
// batch write, so the writes are one UpdateItem each, sent at once. The
// queued ones (a release) share one release record.
func (d *DB) PutCandidates(ctx context.Context, cs []crawl.Candidate) []error {
	errs := make([]error, len(cs))
	sks, err := d.recordRelease(ctx, cs)
	if err != nil {
		for i, c := range cs {
			errs[i] = fmt.Errorf("put candidate %s: %w", c.URL, err)
		}
		return errs
	}
	if len(cs) == 1 {
		// PutCandidate: no goroutine for one write.
		errs[0] = d.putCandidate(ctx, cs[0])
		d.dropUnused(ctx, sks, errs)
		return errs
	}
	sem := make(chan struct{}, putsAtOnce)
	var wg sync.WaitGroup
	for i, c := range cs {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			errs[i] = d.putCandidate(ctx, c)
		}()
	}
	wg.Wait()
	d.dropUnused(ctx, sks, errs)
	return errs
}

// candidateUpdate is the conditional update that writes c as version
// c.Version+1. With rec, the crawl RecordCrawl writes with it, the
// update names that crawl (recorded_crawl_uuid, conditional on not
// naming it already), counts it if it sent a request, and notes a 304
// (unchanged_at, unchanged_of). A due candidate is written under its due
// partition (duePartition).
func (d *DB) candidateUpdate(ctx context.Context, c crawl.Candidate, rec *crawl.CrawlLog, writeID string) (*dynamodb.UpdateItemInput, error) {
	if c.URL == "" {
		return nil, crawl.E("candidate", crawl.KindInvalid, errors.New("no URL"))
	}
	if (c.State == crawl.StateDue || c.State == crawl.StateQueued) && c.Host == "" {
		// The host is the GSI's partition key, which cannot be empty.
		return nil, crawl.E("candidate "+c.URL, crawl.KindInvalid, fmt.Errorf("state %s needs a host", c.State))
	}
	var part string
	if c.State == crawl.StateDue {
		var err error
		if part, err = d.duePartition(ctx, c.Host); err != nil {
			return nil, fmt.Errorf("candidate %s: %w", c.URL, err)
		}
	}
	u := newUpdate(nil)
	u.set(caHost, fxS(c.Host))
	u.set(caState, fxS(string(c.State)))
	u.set(caHops, fxN(int64(c.Hops)))
	u.set(caPriority, fxN(int64(c.Priority)))
	u.set(caDue, fxN(c.DueAt))
	u.set(caCrawlType, fxN(int64(c.CrawlType)))
	u.set(caQueued, fxN(c.QueuedAt))
	u.set(caNRedirs, fxN(int64(c.NRedirs)))
	u.set(caDiscovered, fxN(c.DiscoveredAt))
	u.set(caVersion, fxN(c.Version+1))
	u.setOpt(caLastCrawlTime, fxOptN(c.LastCrawlTime))
	var exit *int64
	if c.LastCrawlExitCode != nil {
		e := int64(*c.LastCrawlExitCode)
		exit = &e
	}
	u.setOpt(caLastCrawlExit, fxOptN(exit))
	u.setOpt(caLastContentful, fxOptN(c.LastContentfulCrawlTime))
	u.setOpt(caLastContentfulTag, fxOptS(c.LastContentfulETag))
	u.setOpt(caCrawlUUID, fxNonEmpty(c.CrawlUUID))
	u.setOpt(caLastCfModified, fxOptN(c.LastContentfulModified))
	u.setOpt(caOrigURL, fxNonEmpty(c.OrigURL))
	u.setOpt(caParent, fxNonEmpty(c.Parent))
	u.setOpt(caSiteID, fxNonEmpty(c.SiteID))
	var mrate, mrateN, every types.AttributeValue
	if c.MRateCounter != 0 {
		mrate, mrateN = fxF(c.MRate), fxN(c.MRateCounter)
	}
	if c.RecrawlEvery != 0 {
		every = fxN(c.RecrawlEvery)
	}
	u.setOpt(caMRate, mrate)
	u.setOpt(caMRateCounter, mrateN)
	u.setOpt(caRecrawlEvery, every)
	var maxDepth *int64
	if c.MaxDepth != nil {
		m := int64(*c.MaxDepth)
		maxDepth = &m
	}
	u.setOpt(caMaxDepth, fxOptN(maxDepth))
	if len(c.RedirectChain) > 0 {
		l := make([]types.AttributeValue, len(c.RedirectChain))
		for i, s := range c.RedirectChain {
			l[i] = fxS(s)
		}
		u.set(caRedirectChain, &types.AttributeValueMemberL{Value: l})
	} else {
		u.remove(caRedirectChain)
	}
	switch {
	case c.State == crawl.StateDue:
		u.set(caDueHost, fxS(part))
		u.set(caDueAt, fxN(c.DueAt))
	case c.State == crawl.StateHeld && c.SiteID != "":
		// Its site's held partition (site.go), never released from.
		u.set(caDueHost, fxS(heldPartition(c.SiteID)))
		u.set(caDueAt, fxN(c.DueAt))
	default:
		u.remove(caDueHost)
		u.remove(caDueAt)
	}
	if rec != nil && rec.ExitCode.Requested() {
		u.add(caCrawls, fxN(1))
	}
	if writeID != "" {
		u.set(caWriteID, fxS(writeID))
	}
	var cond string
	if c.Version == 0 {
		cond = "attribute_not_exists(" + u.name(caURL) + ")"
	} else {
		cond = u.name(caVersion) + " = " + u.value(fxN(c.Version))
	}
	if rec != nil {
		switch {
		case rec.ExitCode == crawl.ExitUnchanged && c.LastContentfulCrawlTime != nil:
			u.set(caUnchangedAt, fxN(rec.TimeStarted))
			u.set(caUnchangedOf, fxN(*c.LastContentfulCrawlTime))
		case rec.ExitCode.Contentful():
			// The next 304 confirms this crawl's content: the last one
			// is kept until the summary of this crawl has closed the
			// generation it extends.
			u.setFrom(caUnchangedPrevAt, caUnchangedAt)
			u.setFrom(caUnchangedPrevOf, caUnchangedOf)
		}
		u.set(caRecorded, fxS(rec.CrawlUUID))
		name := u.name(caRecorded)
		cond = "(" + cond + ") AND (attribute_not_exists(" + name + ") OR " + name + " <> " + u.value(fxS(rec.CrawlUUID)) + ")"
	}
	return &dynamodb.UpdateItemInput{
		TableName:                 aws.String(d.t.Candidates),
		Key:                       map[string]types.AttributeValue{caURL: fxS(c.URL)},
		UpdateExpression:          aws.String(u.expression()),
		ConditionExpression:       aws.String(cond),
		ExpressionAttributeNames:  u.Names(),
		ExpressionAttributeValues: u.Values(),
	}, nil
}

// decodeCandidate reads a candidate item.
func decodeCandidate(m map[string]types.AttributeValue) (crawl.Candidate, error) {
	var c crawl.Candidate
	var err error
	r := fxReader{m: m}
	c.URL = r.str(caURL)
	c.LastCrawlTime = r.optInt(caLastCrawlTime)
	if e := r.optInt(caLastCrawlExit); e != nil {
		code := crawl.ExitCode(*e)
		c.LastCrawlExitCode = &code
	}
	c.LastContentfulCrawlTime = r.optInt(caLastContentful)
	c.LastContentfulETag = r.optStr(caLastContentfulTag)
	c.Host = r.str(caHost)
	c.State = crawl.CandidateState(r.str(caState))
	c.Hops = int(r.int(caHops))
	c.Priority = int(r.int(caPriority))
	c.DueAt = r.int(caDue)
	c.CrawlType = crawl.CrawlType(r.int(caCrawlType))
	c.CrawlUUID = r.str(caCrawlUUID)
	c.QueuedAt = r.int(caQueued)
	c.LastContentfulModified = r.optInt(caLastCfModified)
	c.NRedirs = int(r.int(caNRedirs))
	c.OrigURL = r.str(caOrigURL)
	c.RedirectChain = r.strList(caRedirectChain)
	c.DiscoveredAt = r.int(caDiscovered)
	c.Parent = r.str(caParent)
	c.SiteID = r.str(caSiteID)
	c.MRate, c.MRateCounter, c.RecrawlEvery = r.float(caMRate), r.int(caMRateCounter), r.int(caRecrawlEvery)
	if md := r.optInt(caMaxDepth); md != nil {
		m := int(*md)
		c.MaxDepth = &m
	}
	c.Version = r.int(caVersion)
	if err = r.err; err != nil {
		return c, fmt.Errorf("decode candidate %s: %w", c.URL, err)
	}
	return c, nil
}

// fxLostRace reports whether a write failed on its condition, or collided
// with a transaction writing the same item: either way the caller should
// re-read and try again.
func fxLostRace(err error) bool {
	var tc *types.TransactionConflictException
	return conditionFailed(err) || errors.As(err, &tc)
}

// dueReadWindow is how many due candidates DueCandidates reads per host
// (at least): the GSI orders a host's due candidates by due time only,
// so priority is honoured among each host's dueReadWindow earliest-due
// candidates. A Query page of 500 items of ~0.5 KB costs about 32 read
// units (eventually consistent, 4 KB each at half a unit).
const dueReadWindow = 500

// hostQueries is how many per-host Queries run at once.
const hostQueries = 8

// DueCandidates returns up to limit candidates due at or before now,
// highest priority and earliest due first, the limit shared fairly among
// the due-by-host GSI's partitions a release reads (duePartitions: a
// partition per scope host and per host that has been a site root's,
// and one for every other host's due URLs), round robin, so that one host's backlog cannot hold
// back the others (the SQLite store shares it among its hosts with URLs
// due). Each partition's due candidates are read earliest due first, at
// most max(dueReadWindow, limit/partitions) of them, so a partition with
// more due candidates than that is served its earliest-due ones. The GSI
// is eventually consistent: a candidate returned may have changed since,
// which the release's conditional write catches.
func (d *DB) DueCandidates(ctx context.Context, now int64, limit int) ([]crawl.Candidate, error) {
	if limit <= 0 {
		return nil, nil
	}
	hosts, err := d.duePartitions(ctx)
	if err != nil {
		return nil, fmt.Errorf("due candidates: %w", err)
	}
	if len(hosts) == 0 {
		return nil, nil
	}
	perHost := max(dueReadWindow, (limit+len(hosts)-1)/len(hosts))
	byHost := make([][]crawl.Candidate, len(hosts))
	err = fxForHosts(ctx, hosts, func(ctx context.Context, i int, host string) error {
		cs, err := d.queryHost(ctx, IndexDueByHost, caDueHost, caDueAt, host, now, perHost)
		if err != nil {
			return err
		}
		sortCandidates(cs, dueFirst)
		byHost[i] = cs
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("due candidates: %w", err)
	}
	// Round robin over the hosts, the host with the best candidate first.
	sort.SliceStable(byHost, func(i, j int) bool {
		a, b := byHost[i], byHost[j]
		if len(a) == 0 || len(b) == 0 {
			return len(b) == 0 && len(a) > 0
		}
		return dueFirst(a[0], b[0])
	})
	var out []crawl.Candidate
	for round := 0; len(out) < limit; round++ {
		took := false
		for _, cs := range byHost {
			if round < len(cs) && len(out) < limit {
				out = append(out, cs[round])
				took = true
			}
		}
		if !took {
			break
		}
	}
	sortCandidates(out, dueFirst)
	return out, nil
}

// dueFirst orders due candidates: highest priority, then earliest due,
// then by URL.
func dueFirst(a, b crawl.Candidate) bool {
	if a.Priority != b.Priority {
		return a.Priority > b.Priority
	}
	if a.DueAt != b.DueAt {
		return a.DueAt < b.DueAt
	}
	return a.URL < b.URL
}

// queuedFirst orders queued candidates: earliest released, then by URL.
func queuedFirst(a, b crawl.Candidate) bool {
	if a.QueuedAt != b.QueuedAt {
		return a.QueuedAt < b.QueuedAt
	}
	return a.URL < b.URL
}

func sortCandidates(cs []crawl.Candidate, less func(a, b crawl.Candidate) bool) {
	sort.Slice(cs, func(i, j int) bool { return less(cs[i], cs[j]) })
}

// StaleQueued returns up to limit candidates released to fetch at or
// before the given time whose crawl has not been recorded (their fetch
// message was lost, or is still on its way), oldest release first. It
// reads the release records of that time, oldest first, and deletes
// those none of whose candidates is still queued from that release.
func (d *DB) StaleQueued(ctx context.Context, before int64, limit int) ([]crawl.Candidate, error) {
	if limit <= 0 {
		return nil, nil
	}
	var out []crawl.Candidate
	seen := map[string]bool{} // a URL two records of one time name
	err := d.releases(ctx, before, func(r releaseRecord) (bool, error) {
		if len(r.queued) == 0 {
			return true, d.deleteRelease(ctx, r.sk)
		}
		for _, c := range r.queued {
			if !seen[c.URL] {
				seen[c.URL] = true
				out = append(out, c)
			}
		}
		return len(out) < limit, nil
	})
	if err != nil {
		return nil, fmt.Errorf("stale queued: %w", err)
	}
	sortCandidates(out, queuedFirst)
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// NextDue returns the earliest due time of a candidate in state due, and
// false when none is due at any time. It reads one item per partition a
// release reads (duePartitions) from the due-by-host GSI.
func (d *DB) NextDue(ctx context.Context) (int64, bool, error) {
	hosts, err := d.duePartitions(ctx)
	if err != nil {
		return 0, false, fmt.Errorf("next due: %w", err)
	}
	first := make([]*int64, len(hosts))
	err = fxForHosts(ctx, hosts, func(ctx context.Context, i int, host string) error {
		out, err := d.api.Query(ctx, &dynamodb.QueryInput{
			TableName:                 aws.String(d.t.Candidates),
			IndexName:                 aws.String(IndexDueByHost),
			KeyConditionExpression:    aws.String("#h = :h"),
			ExpressionAttributeNames:  map[string]string{"#h": caDueHost, "#t": caDueAt},
			ExpressionAttributeValues: map[string]types.AttributeValue{":h": fxS(host)},
			ProjectionExpression:      aws.String("#t"),
			Limit:                     aws.Int32(1),
		})
		if err != nil {
			return fmt.Errorf("query %s of %s: %w", IndexDueByHost, host, err)
		}
		if len(out.Items) > 0 {
			r := fxReader{m: out.Items[0]}
			first[i] = r.optInt(caDueAt)
			return r.err
		}
		return nil
	})
	if err != nil {
		return 0, false, fmt.Errorf("next due: %w", err)
	}
	var next int64
	found := false
	for _, t := range first {
		if t != nil && (!found || *t < next) {
			next, found = *t, true
		}
	}
	return next, found, nil
}

// duePartitions is the due-by-host GSI's partitions a release reads
// (duepartition.go): the scope's hosts (the seeds'), every host that has
// been a site root's, those of the sites' roots now (a site put before
// hosts were registered), and outsidePartition, which holds the due URLs
// of every other host.
func (d *DB) duePartitions(ctx context.Context) ([]string, error) {
	scope, err := d.ScopeHosts(ctx)
	if err != nil {
		return nil, err
	}
	registered, err := d.hosts(ctx, ctlSiteHost)
	if err != nil {
		return nil, fmt.Errorf("read site hosts: %w", err)
	}
	sites, err := d.Sites(ctx)
	if err != nil {
		return nil, err
	}
	var hosts []string
	seen := map[string]bool{}
	add := func(hs ...string) {
		for _, h := range hs {
			if !seen[h] {
				seen[h] = true
				hosts = append(hosts, h)
			}
		}
	}
	add(scope...)
	add(registered...)
	for _, s := range sites {
		add(rootHosts(s.Roots)...)
	}
	return append(hosts, outsidePartition), nil
}

// queryHost reads up to n candidates of one host from a sparse GSI whose
// sort key is at most upTo, in the sort key's order.
func (d *DB) queryHost(ctx context.Context, index, hostAttr, timeAttr, host string, upTo int64, n int) ([]crawl.Candidate, error) {
	in := &dynamodb.QueryInput{
		TableName:                 aws.String(d.t.Candidates),
		IndexName:                 aws.String(index),
		KeyConditionExpression:    aws.String("#h = :h AND #t <= :t"),
		ExpressionAttributeNames:  map[string]string{"#h": hostAttr, "#t": timeAttr},
		ExpressionAttributeValues: map[string]types.AttributeValue{":h": fxS(host), ":t": fxN(upTo)},
	}
	var out []crawl.Candidate
	for len(out) < n {
		in.Limit = aws.Int32(int32(min(n-len(out), 1000)))
		page, err := d.api.Query(ctx, in)
		if err != nil {
			return nil, fmt.Errorf("query %s of %s: %w", index, host, err)
		}
		for _, it := range page.Items {
			c, err := decodeCandidate(it)
			if err != nil {
				return nil, err
			}
			out = append(out, c)
		}
		if len(page.LastEvaluatedKey) == 0 {
			break
		}
		in.ExclusiveStartKey = page.LastEvaluatedKey
	}
	return out, nil
}

// fxForHosts calls f for every host, hostQueries at a time, and returns
// the first error (cancelling the calls still running).
func fxForHosts(ctx context.Context, hosts []string, f func(ctx context.Context, i int, host string) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sem := make(chan struct{}, hostQueries)
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	for i, h := range hosts {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if err := f(ctx, i, h); err != nil {
				once.Do(func() { first = err; cancel() })
			}
		}()
	}
	wg.Wait()
	if first == nil && ctx.Err() != nil {
		// The caller's context ended before every host was read.
		return ctx.Err()
	}
	return first
}

// newWriteID returns a write_id: 64 random bits, in hex.
func newWriteID() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24)
	return hex.EncodeToString(b[:])
}
