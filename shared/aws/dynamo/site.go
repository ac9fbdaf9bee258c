package dynamo

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/serverless-crawler/crawler/shared/crawl"
)

// Sites (seed 001) in the control table: one item a site, pk="site",
// sk=its ID, with seed 001's field names. Its settings, roots and
// filters are written by PutSite with a conditional update that never
// touches the counters; the counters change by ADD in the writes that
// change them (a candidate collected, a crawl recorded). A held
// candidate (its site disabled, or suspended for a link found in a page)
// keeps its due time in the due-by-host GSI under the partition
// held#<site ID> instead of its host (candidateUpdate): the release never
// reads that partition, and enabling the site lists its held URLs with
// one Query a page.

const (
	ctlSite = "site"

	stID = "Id"
	// settings
	stRoots, stFilters, stState, stPriority                           = "Roots", "Filters", "State", "Priority"
	stMaxURLs, stMaxResources, stMaxErrors                            = "MaxURLs", "MaxResources", "MaxErrors"
	stMaxResourceSize, stMaxURLsFromPage                              = "MaxResourceSize", "MaxURLsFromPage"
	stRequestDelay, stHTTPTimeout, stURLType, stRecrawlPeriod         = "RequestDelay", "HTTPTimeout", "URLType", "RecrawlPeriod"
	stRecrawlDate, stStateReason, stCDate, stUDate, stTcDate          = "RecrawlDate", "StateReason", "CDate", "UDate", "TcDate"
	stFPattern, stFType, stFMode                                      = "Pattern", "Type", "Mode"
	stResources, stSize, stErrors, stCollected, stIterations, stSpeed = "Resources", "Size", "Errors", "CollectedURLs", "Iterations", "SpeedSum"
	stSpeedCount                                                      = "AVGSpeedCounter"
)

// heldPartition is the due-by-host GSI partition of a site's held URLs.
func heldPartition(siteID string) string { return "held#" + siteID }

// Sites returns every site, by ID.
func (d *DB) Sites(ctx context.Context) ([]crawl.Site, error) {
	in := &dynamodb.QueryInput{
		TableName:                 aws.String(d.t.Control),
		KeyConditionExpression:    aws.String("#pk = :pk"),
		ExpressionAttributeNames:  map[string]string{"#pk": ctlPK},
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": fxS(ctlSite)},
		ConsistentRead:            aws.Bool(true),
	}
	var out []crawl.Site
	for {
		page, err := d.api.Query(ctx, in)
		if err != nil {
			return nil, fmt.Errorf("read sites: %w", err)
		}
		for _, it := range page.Items {
			s, err := decodeSite(it)
			if err != nil {
				return nil, err
			}
			out = append(out, s)
		}
		if len(page.LastEvaluatedKey) == 0 {
			return out, nil
		}
		in.ExclusiveStartKey = page.LastEvaluatedKey
	}
}

// GetSite returns a site, or crawl.ErrNotFound. (NewURLs and Contents
// are not counted on AWS: that would read every URL of the site.)
func (d *DB) GetSite(ctx context.Context, id string) (crawl.Site, error) {
	out, err := d.api.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(d.t.Control), Key: ctlKey(ctlSite, id), ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return crawl.Site{}, fmt.Errorf("read site %s: %w", id, err)
	}
	if len(out.Item) == 0 {
		return crawl.Site{}, fmt.Errorf("site %s: %w", id, crawl.ErrNotFound)
	}
	return decodeSite(out.Item)
}

func decodeSite(it map[string]types.AttributeValue) (crawl.Site, error) {
	r := fxReader{m: it}
	s := crawl.Site{
		ID: r.str(ctlSK), Roots: r.strList(stRoots), State: crawl.SiteState(r.int(stState)), Priority: int(r.int(stPriority)),
		MaxURLs: r.int(stMaxURLs), MaxResources: r.int(stMaxResources), MaxErrors: r.int(stMaxErrors),
		MaxResourceSize: r.int(stMaxResourceSize), MaxURLsFromPage: r.int(stMaxURLsFromPage),
		RequestDelay: r.int(stRequestDelay), HTTPTimeout: r.int(stHTTPTimeout), URLType: crawl.URLType(r.int(stURLType)),
		RecrawlPeriod: r.int(stRecrawlPeriod), RecrawlDate: r.optInt(stRecrawlDate), StateReason: r.str(stStateReason),
		CDate: r.int(stCDate), UDate: r.int(stUDate), TcDate: r.int(stTcDate),
		Resources: r.int(stResources), Size: r.int(stSize), Errors: r.int(stErrors), CollectedURLs: r.int(stCollected),
		Iterations: r.int(stIterations), AVGSpeedCount: r.int(stSpeedCount),
	}
	if s.AVGSpeedCount > 0 {
		s.AVGSpeed = r.float(stSpeed) / float64(s.AVGSpeedCount)
	}
	if l, ok := it[stFilters].(*types.AttributeValueMemberL); ok {
		for _, v := range l.Value {
			m, ok := v.(*types.AttributeValueMemberM)
			if !ok {
				return s, fmt.Errorf("site %s: a filter is not a map", s.ID)
			}
			f := fxReader{m: m.Value}
			s.Filters = append(s.Filters, crawl.SiteFilter{Pattern: f.str(stFPattern), Type: crawl.FilterType(f.int(stFType)),
				Mode: crawl.FilterMode(f.int(stFMode))})
			if f.err != nil {
				return s, fmt.Errorf("site %s: filter: %w", s.ID, f.err)
			}
		}
	}
	if r.err != nil {
		return s, fmt.Errorf("site %s: %w", s.ID, r.err)
	}
	return s, nil
}

// PutSite writes a site's settings, roots, filters and state reason (not
// its counters): a new site if create (crawl.ErrConflict if the ID is
// taken), else an existing one (crawl.ErrNotFound if there is none).
// Its URLs then follow its state: held while it is disabled (and, while
// it is suspended, those found in pages), due again when it is enabled.
// (Unlike the SQLite store, a new priority does not move the URLs
// already due: the due-by-host GSI orders a host's URLs by due time.)
func (d *DB) PutSite(ctx context.Context, s crawl.Site, create bool) error {
	if err := s.Validate(); err != nil {
		return crawl.E("put site", crawl.KindInvalid, err)
	}
	u := newUpdate(nil)
	roots := make([]types.AttributeValue, len(s.Roots))
	for i, r := range s.Roots {
		roots[i] = fxS(r)
	}
	filters := make([]types.AttributeValue, len(s.Filters))
	for i, f := range s.Filters {
		filters[i] = &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{
			stFPattern: fxS(f.Pattern), stFType: fxN(int64(f.Type)), stFMode: fxN(int64(f.Mode))}}
	}
	u.set(stRoots, &types.AttributeValueMemberL{Value: roots})
	u.set(stFilters, &types.AttributeValueMemberL{Value: filters})
	for _, f := range []struct {
		attr string
		v    int64
	}{
		{stState, int64(s.State)}, {stPriority, int64(s.Priority)}, {stMaxURLs, s.MaxURLs}, {stMaxResources, s.MaxResources},
		{stMaxErrors, s.MaxErrors}, {stMaxResourceSize, s.MaxResourceSize}, {stMaxURLsFromPage, s.MaxURLsFromPage},
		{stRequestDelay, s.RequestDelay}, {stHTTPTimeout, s.HTTPTimeout}, {stURLType, int64(s.URLType)},
		{stRecrawlPeriod, s.RecrawlPeriod}, {stUDate, s.UDate}, {stErrors, s.Errors},
	} {
		u.set(f.attr, fxN(f.v))
	}
	u.setOpt(stRecrawlDate, fxOptN(s.RecrawlDate))
	u.setOpt(stStateReason, fxNonEmpty(s.StateReason))
	// Its roots' hosts are released by name from now on, even once the
	// roots change (duepartition.go): registered before the site names
	// them.
	for _, h := range rootHosts(s.Roots) {
		if err := d.addHost(ctx, ctlSiteHost, h); err != nil {
			return fmt.Errorf("put site %s: register host %s: %w", s.ID, h, err)
		}
	}
	cond := "attribute_exists(" + u.name(ctlPK) + ")"
	if create {
		u.set(stCDate, fxN(s.CDate))
		cond = "attribute_not_exists(" + u.name(ctlPK) + ")"
	}
	_, err := d.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(d.t.Control), Key: ctlKey(ctlSite, s.ID), UpdateExpression: aws.String(u.expression()),
		ConditionExpression: aws.String(cond), ExpressionAttributeNames: u.Names(), ExpressionAttributeValues: u.Values(),
	})
	switch {
	case conditionFailed(err) && create:
		return fmt.Errorf("put site %s: site exists: %w", s.ID, crawl.ErrConflict)
	case conditionFailed(err):
		return fmt.Errorf("put site %s: %w", s.ID, crawl.ErrNotFound)
	case err != nil:
		return fmt.Errorf("put site %s: %w", s.ID, err)
	}
	if err := d.holdSite(ctx, s.ID, s.Roots, s.State); err != nil {
		return fmt.Errorf("put site %s: %w", s.ID, err)
	}
	return nil
}

// holdSite makes a site's URLs follow its state, as the SQLite store's
// does: disabled, every URL due or released is held (a fetch task
// already sent for one is then dropped as stale); suspended, those found
// in pages are, and those a user enqueued are due; active, every held
// URL is due again, at the time it was due. The due and released URLs
// are found by the roots' hosts in the due GSI and in the release
// records, the held ones in their
// partition.
func (d *DB) holdSite(ctx context.Context, id string, roots []string, st crawl.SiteState) error {
	var cands []crawl.Candidate
	if st != crawl.SiteActive {
		hosts := map[string]bool{}
		for _, h := range rootHosts(roots) {
			hosts[h] = true
			cs, err := d.queryHost(ctx, IndexDueByHost, caDueHost, caDueAt, h, math.MaxInt64, math.MaxInt32)
			if err != nil {
				return err
			}
			cands = append(cands, cs...)
		}
		// The released ones, through their release records (a URL two
		// records of one time name, once).
		seen := map[string]bool{}
		err := d.releases(ctx, math.MaxInt64, func(r releaseRecord) (bool, error) {
			for _, c := range r.queued {
				if hosts[c.Host] && !seen[c.URL] {
					seen[c.URL] = true
					cands = append(cands, c)
				}
			}
			return true, nil
		})
		if err != nil {
			return err
		}
	}
	held, err := d.queryHost(ctx, IndexDueByHost, caDueHost, caDueAt, heldPartition(id), math.MaxInt64, math.MaxInt32)
	if err != nil {
		return err
	}
	cands = append(cands, held...)
	for _, c := range cands {
		if c.SiteID != id {
			continue
		}
		next := c.State
		switch {
		case st.Holds(c.Parent != ""):
			if c.State == crawl.StateDue || c.State == crawl.StateQueued {
				next = crawl.StateHeld
			}
		case c.State == crawl.StateHeld:
			next = crawl.StateDue
		}
		if next == c.State {
			continue
		}
		if c.State == crawl.StateQueued {
			c.CrawlUUID = ""
		}
		c.State = next
		// The GSIs are eventually consistent: a candidate changed since is
		// left to its new writer (ErrConflict), as a release does.
		if err := d.PutCandidate(ctx, c); err != nil && !errors.Is(err, crawl.ErrConflict) {
			return fmt.Errorf("hold URLs of site %s: %w", id, err)
		}
	}
	return nil
}

// rootHosts is the hosts of a site's roots (normalized URLs), each once.
func rootHosts(roots []string) []string {
	var hosts []string
	seen := map[string]bool{}
	for _, r := range roots {
		rest := r[strings.Index(r, "://")+3:]
		if i := strings.IndexAny(rest, "/?#"); i >= 0 {
			rest = rest[:i]
		}
		if rest != "" && !seen[rest] {
			seen[rest] = true
			hosts = append(hosts, rest)
		}
	}
	return hosts
}

// StartSiteRecrawls starts the periodic recrawl of every active site
// whose RecrawlDate has come, as the SQLite store's does: its roots due
// now as recrawls, its Iterations counted, its error count at 0 and its
// next RecrawlDate a period on. The site's update is conditional on the
// date it read, so two schedulers start a site's recrawl once.
func (d *DB) StartSiteRecrawls(ctx context.Context, now int64) (int, error) {
	sites, err := d.Sites(ctx)
	if err != nil {
		return 0, fmt.Errorf("start site recrawls: %w", err)
	}
	n := 0
	for _, s := range sites {
		if s.State != crawl.SiteActive || s.RecrawlPeriod <= 0 {
			continue
		}
		date := s.CDate + s.RecrawlPeriod*60
		if s.RecrawlDate != nil {
			date = *s.RecrawlDate
		}
		if date > now {
			continue
		}
		u := newUpdate(nil)
		u.set(stRecrawlDate, fxN(now+s.RecrawlPeriod*60))
		u.set(stErrors, fxN(0))
		u.set(stTcDate, fxN(now))
		u.add(stIterations, fxN(1))
		cond := "attribute_not_exists(" + u.name(stRecrawlDate) + ")"
		if s.RecrawlDate != nil {
			cond = u.name(stRecrawlDate) + " = " + u.value(fxN(*s.RecrawlDate))
		}
		_, err := d.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName: aws.String(d.t.Control), Key: ctlKey(ctlSite, s.ID), UpdateExpression: aws.String(u.expression()),
			ConditionExpression: aws.String(cond), ExpressionAttributeNames: u.Names(), ExpressionAttributeValues: u.Values(),
		})
		if conditionFailed(err) {
			continue // another scheduler started it
		}
		if err != nil {
			return n, fmt.Errorf("start recrawl of site %s: %w", s.ID, err)
		}
		n++
		for _, root := range s.Roots {
			c, err := d.GetCandidate(ctx, root)
			if errors.Is(err, crawl.ErrNotFound) {
				continue
			}
			if err != nil {
				return n, fmt.Errorf("start recrawl of site %s: %w", s.ID, err)
			}
			if c.State != crawl.StateCrawled && c.State != crawl.StateDue {
				continue
			}
			c.State, c.DueAt, c.CrawlType = crawl.StateDue, now, crawl.CrawlRecrawl
			if err := d.PutCandidate(ctx, c); err != nil && !errors.Is(err, crawl.ErrConflict) {
				return n, fmt.Errorf("start recrawl of site %s: %w", s.ID, err)
			}
		}
	}
	return n, nil
}

// countSiteURL counts a URL the site collected.
func (d *DB) countSiteURL(ctx context.Context, siteID string, at int64) error {
	u := newUpdate(nil)
	u.add(stCollected, fxN(1))
	u.set(stTcDate, fxN(at))
	return d.updateSite(ctx, siteID, u, "count a URL")
}

// countSiteCrawl adds a recorded crawl to its site's counters and
// suspends the site when its errors reach MaxErrors, saying why, as the
// SQLite store's does.
func (d *DB) countSiteCrawl(ctx context.Context, siteID string, cr crawl.Crawl) error {
	l := cr.Log
	stored := cr.File != nil && cr.File.BodyKey != ""
	var size int64
	if stored && cr.File.FileSize != nil {
		size = *cr.File.FileSize
	}
	u := newUpdate(nil)
	u.set(stTcDate, fxN(l.TimeStarted))
	if stored {
		u.add(stResources, fxN(1))
		u.add(stSize, fxN(size))
		if l.TimeTakenMS > 0 {
			u.add(stSpeed, fxF(float64(size)*1000/float64(l.TimeTakenMS)))
			u.add(stSpeedCount, fxN(1))
		}
	}
	failed := l.ExitCode.Failed()
	if failed {
		u.add(stErrors, fxN(1))
	}
	if err := d.updateSite(ctx, siteID, u, "count a crawl"); err != nil || !failed {
		return err
	}
	s := newUpdate(nil)
	s.set(stState, fxN(int64(crawl.SiteSuspended)))
	s.set(stUDate, fxN(l.TimeStarted))
	cond := s.name(stState) + " = " + s.value(fxN(int64(crawl.SiteActive))) + " AND " + s.name(stMaxErrors) + " > " +
		s.value(fxN(0)) + " AND " + s.name(stErrors) + " >= " + s.name(stMaxErrors)
	out, err := d.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(d.t.Control), Key: ctlKey(ctlSite, siteID), UpdateExpression: aws.String(s.expression()),
		ConditionExpression: aws.String(cond), ExpressionAttributeNames: s.Names(), ExpressionAttributeValues: s.Values(),
		ReturnValues: types.ReturnValueAllNew,
	})
	if conditionFailed(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("suspend site %s: %w", siteID, err)
	}
	site, err := decodeSite(out.Attributes)
	if err != nil {
		return err
	}
	r := newUpdate(nil)
	r.set(stStateReason, fxS(fmt.Sprintf("suspended by the crawler: %d errors reached max_errors %d (the last: %s %s)",
		site.Errors, site.MaxErrors, l.ExitCode, crawl.Truncate(l.URL, 200))))
	if err := d.updateSite(ctx, siteID, r, "say why it is suspended"); err != nil {
		return err
	}
	return d.holdSite(ctx, siteID, site.Roots, crawl.SiteSuspended)
}

// updateSite applies u to an existing site item.
func (d *DB) updateSite(ctx context.Context, id string, u *fxUpdate, what string) error {
	cond := "attribute_exists(" + u.name(ctlPK) + ")"
	_, err := d.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(d.t.Control), Key: ctlKey(ctlSite, id), UpdateExpression: aws.String(u.expression()),
		ConditionExpression: aws.String(cond), ExpressionAttributeNames: u.Names(), ExpressionAttributeValues: u.Values(),
	})
	if conditionFailed(err) {
		return nil // the site is gone: nothing to count
	}
	if err != nil {
		return fmt.Errorf("site %s: %s: %w", id, what, err)
	}
	return nil
}
