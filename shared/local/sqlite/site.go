package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/serverless-crawler/crawler/shared/crawl"
)

// Sites (seed 001) in the tables sites, sites_urls, sites_filters and
// sites_properties. A site's settings are written whole by PutSite; its
// counters by the writes that change them (a candidate collected, a crawl
// recorded), in the same transaction.

// stateReasonProperty is the sites_properties Name of a site's
// StateReason.
const stateReasonProperty = "StateReason"

const siteColumns = `Id, UDate, TcDate, CDate, Resources, Contents, CollectedURLs, NewURLs, Iterations, State, Priority,
	MaxURLs, MaxURLsFromPage, MaxResources, MaxErrors, MaxResourceSize, RequestDelay, HTTPTimeout, Errors, Size,
	AVGSpeed, AVGSpeedCounter, URLType, RecrawlPeriod, RecrawlDate`

func scanSite(s scanner) (crawl.Site, error) {
	var st crawl.Site
	var udate, tcdate sql.NullInt64
	err := s.Scan(&st.ID, &udate, &tcdate, &st.CDate, &st.Resources, &st.Contents, &st.CollectedURLs, &st.NewURLs,
		&st.Iterations, &st.State, &st.Priority, &st.MaxURLs, &st.MaxURLsFromPage, &st.MaxResources, &st.MaxErrors,
		&st.MaxResourceSize, &st.RequestDelay, &st.HTTPTimeout, &st.Errors, &st.Size, &st.AVGSpeed, &st.AVGSpeedCount,
		&st.URLType, &st.RecrawlPeriod, &st.RecrawlDate)
	st.UDate, st.TcDate = udate.Int64, tcdate.Int64
	return st, err
}

// Sites returns every site with its roots, filters and stored counters,
// by ID.
func (d *DB) Sites(ctx context.Context) ([]crawl.Site, error) {
	if d.older != nil && d.older.noSites {
		return nil, nil // a database of an earlier version, read-only: no sites yet
	}
	rows, err := d.query(ctx, `SELECT `+siteColumns+` FROM sites ORDER BY Id`)
	if err != nil {
		return nil, fmt.Errorf("read sites: %w", err)
	}
	var sites []crawl.Site
	for rows.Next() {
		s, err := scanSite(rows)
		if err != nil {
			rows.Close()
			return nil, fmt.Errorf("read sites: %w", err)
		}
		sites = append(sites, s)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read sites: %w", err)
	}
	for i := range sites {
		if err := d.siteParts(ctx, &sites[i]); err != nil {
			return nil, err
		}
	}
	return sites, nil
}

// GetSite returns a site, or crawl.ErrNotFound; NewURLs and Contents are
// counted from its URLs.
func (d *DB) GetSite(ctx context.Context, id string) (crawl.Site, error) {
	if d.older != nil && d.older.noSites {
		return crawl.Site{}, fmt.Errorf("site %s: %w", id, crawl.ErrNotFound)
	}
	s, err := scanSite(d.queryRow(ctx, `SELECT `+siteColumns+` FROM sites WHERE Id=?`, id))
	if notFound(err) {
		return s, fmt.Errorf("site %s: %w", id, crawl.ErrNotFound)
	}
	if err != nil {
		return s, fmt.Errorf("read site %s: %w", id, err)
	}
	if err := d.siteParts(ctx, &s); err != nil {
		return s, err
	}
	err = d.queryRow(ctx, `SELECT count(*) FILTER (WHERE c.last_crawl_time_unix_utc IS NULL AND f.state<>'filtered'),
		count(*) FILTER (WHERE c.last_crawl_exit_code BETWEEN 1 AND 9)
		FROM crawl_frontier f JOIN crawl_candidate c ON c.url_id=f.url_id WHERE f.site_id=?`, id).Scan(&s.NewURLs, &s.Contents)
	if err != nil {
		return s, fmt.Errorf("count URLs of site %s: %w", id, err)
	}
	return s, nil
}

// siteParts reads a site's roots, filters and state reason.
func (d *DB) siteParts(ctx context.Context, s *crawl.Site) error {
	rows, err := d.query(ctx, `SELECT URL FROM sites_urls WHERE Site_Id=? ORDER BY CDate, rowid`, s.ID)
	if err != nil {
		return fmt.Errorf("read roots of site %s: %w", s.ID, err)
	}
	for rows.Next() {
		var u string
		if err := rows.Scan(&u); err != nil {
			rows.Close()
			return fmt.Errorf("read roots of site %s: %w", s.ID, err)
		}
		s.Roots = append(s.Roots, u)
	}
	rows.Close()
	rows, err = d.query(ctx, `SELECT Pattern, Type, Mode FROM sites_filters WHERE Site_Id=? ORDER BY rowid`, s.ID)
	if err != nil {
		return fmt.Errorf("read filters of site %s: %w", s.ID, err)
	}
	for rows.Next() {
		var f crawl.SiteFilter
		if err := rows.Scan(&f.Pattern, &f.Type, &f.Mode); err != nil {
			rows.Close()
			return fmt.Errorf("read filters of site %s: %w", s.ID, err)
		}
		s.Filters = append(s.Filters, f)
	}
	rows.Close()
	err = d.queryRow(ctx, `SELECT coalesce(Value,'') FROM sites_properties WHERE Site_Id=? AND URLMd5='' AND Name=?`,
		s.ID, stateReasonProperty).Scan(&s.StateReason)
	if err != nil && !notFound(err) {
		return fmt.Errorf("read state of site %s: %w", s.ID, err)
	}
	return rows.Err()
}

// PutSite writes a site's settings, roots, filters and state reason (not
// its counters): a new site if create (crawl.ErrConflict if the ID is
// taken), else an existing one (crawl.ErrNotFound if there is none).
// Its URLs follow its state in the same write: held while it is disabled
// (and, while it is suspended, those found in pages), due again when it
// is enabled; a new priority moves them in the release order.
func (d *DB) PutSite(ctx context.Context, s crawl.Site, create bool) error {
	if err := s.Validate(); err != nil {
		return crawl.E("put site", crawl.KindInvalid, err)
	}
	err := d.tx(ctx, func(ctx context.Context, w *wtx) error {
		var oldPriority int
		err := w.QueryRowContext(ctx, `SELECT Priority FROM sites WHERE Id=?`, s.ID).Scan(&oldPriority)
		switch {
		case err == nil && create:
			return fmt.Errorf("site %s exists: %w", s.ID, crawl.ErrConflict)
		case notFound(err) && !create:
			return fmt.Errorf("site %s: %w", s.ID, crawl.ErrNotFound)
		case err != nil && !notFound(err):
			return err
		}
		if create {
			if _, err := w.ExecContext(ctx, `INSERT INTO sites(Id, CDate, UDate) VALUES(?,?,?)`, s.ID, s.CDate, s.UDate); err != nil {
				return err
			}
		}
		if _, err := w.ExecContext(ctx, `UPDATE sites SET UDate=?, State=?, Priority=?, MaxURLs=?, MaxURLsFromPage=?,
			MaxResources=?, MaxErrors=?, MaxResourceSize=?, RequestDelay=?, HTTPTimeout=?, URLType=?, RecrawlPeriod=?,
			RecrawlDate=?, Errors=? WHERE Id=?`,
			s.UDate, s.State, s.Priority, s.MaxURLs, s.MaxURLsFromPage, s.MaxResources, s.MaxErrors, s.MaxResourceSize,
			s.RequestDelay, s.HTTPTimeout, s.URLType, s.RecrawlPeriod, s.RecrawlDate, s.Errors, s.ID); err != nil {
			return err
		}
		if err := replaceSiteParts(ctx, w, s); err != nil {
			return err
		}
		if d := s.Priority - oldPriority; d != 0 && !create {
			if _, err := w.ExecContext(ctx, `UPDATE crawl_frontier SET priority=priority+?, version=version+1 WHERE site_id=?`, d, s.ID); err != nil {
				return err
			}
		}
		return holdSite(ctx, w, s.ID, s.State)
	})
	if err != nil {
		return fmt.Errorf("put site %s: %w", s.ID, err)
	}
	return nil
}

func replaceSiteParts(ctx context.Context, w *wtx, s crawl.Site) error {
	// Roots kept keep their creation date; filters are replaced whole.
	if _, err := w.ExecContext(ctx, `DELETE FROM sites_urls WHERE Site_Id=? AND URL NOT IN (SELECT value FROM json_each(?))`,
		s.ID, jsonList(s.Roots)); err != nil {
		return err
	}
	for _, r := range s.Roots {
		if _, err := w.ExecContext(ctx, `INSERT INTO sites_urls(Site_Id, URL, CDate) VALUES(?,?,?) ON CONFLICT DO NOTHING`,
			s.ID, r, s.UDate); err != nil {
			return err
		}
	}
	if _, err := w.ExecContext(ctx, `DELETE FROM sites_filters WHERE Site_Id=?`, s.ID); err != nil {
		return err
	}
	for _, f := range s.Filters {
		if _, err := w.ExecContext(ctx, `INSERT INTO sites_filters(Site_Id, Pattern, Type, UDate, CDate, Mode) VALUES(?,?,?,?,?,?)`,
			s.ID, f.Pattern, f.Type, s.UDate, s.UDate, f.Mode); err != nil {
			return err
		}
	}
	return setStateReason(ctx, w, s.ID, s.StateReason, s.UDate)
}

func setStateReason(ctx context.Context, w *wtx, id, reason string, now int64) error {
	if reason == "" {
		_, err := w.ExecContext(ctx, `DELETE FROM sites_properties WHERE Site_Id=? AND URLMd5='' AND Name=?`, id, stateReasonProperty)
		return err
	}
	_, err := w.ExecContext(ctx, `INSERT INTO sites_properties(Site_Id, URLMd5, Name, Value, UDate, CDate) VALUES(?,'',?,?,?,?)
		ON CONFLICT DO UPDATE SET Value=excluded.Value, UDate=excluded.UDate`, id, stateReasonProperty, reason, now, now)
	return err
}

// holdSite makes a site's URLs follow its state: disabled, every URL due
// or released is held (a fetch task already sent for one is then
// dropped as stale); suspended, those found in pages are, and those a
// user enqueued are due; active, every held URL is due again, at the
// time it was due.
func holdSite(ctx context.Context, w *wtx, id string, st crawl.SiteState) error {
	var q string
	switch st {
	case crawl.SiteDisabled:
		q = `UPDATE crawl_frontier SET state='held', crawl_uuid=NULL, version=version+1
			WHERE site_id=? AND state IN ('due','queued')`
	case crawl.SiteSuspended:
		q = `UPDATE crawl_frontier SET state=CASE WHEN parent_url IS NULL THEN 'due' ELSE 'held' END,
			crawl_uuid=CASE WHEN parent_url IS NULL THEN crawl_uuid ELSE NULL END, version=version+1
			WHERE site_id=? AND (state='held' AND parent_url IS NULL OR state IN ('due','queued') AND parent_url IS NOT NULL)`
	default:
		q = `UPDATE crawl_frontier SET state='due', version=version+1 WHERE site_id=? AND state='held'`
	}
	if _, err := w.ExecContext(ctx, q, id); err != nil {
		return fmt.Errorf("hold URLs of site %s: %w", id, err)
	}
	return nil
}

// countSiteCrawl adds a recorded crawl to its site's counters (touch
// date, resources and size, average speed, errors) and suspends the site
// when its errors reach MaxErrors, saying why.
func countSiteCrawl(ctx context.Context, w *wtx, siteID string, cr crawl.Crawl) error {
	l := cr.Log
	var size int64
	stored := cr.File != nil && cr.File.BodyKey != ""
	if stored && cr.File.FileSize != nil {
		size = *cr.File.FileSize
	}
	var speed *float64
	if stored && l.TimeTakenMS > 0 {
		v := float64(size) * 1000 / float64(l.TimeTakenMS)
		speed = &v
	}
	failed := l.ExitCode.Failed()
	if _, err := w.ExecContext(ctx, `UPDATE sites SET TcDate=?1, Resources=Resources+?2, Size=Size+?3, Errors=Errors+?4,
		AVGSpeed=CASE WHEN ?5 IS NULL THEN AVGSpeed ELSE (AVGSpeed*AVGSpeedCounter+?5)/(AVGSpeedCounter+1) END,
		AVGSpeedCounter=AVGSpeedCounter+(?5 IS NOT NULL) WHERE Id=?6`,
		l.TimeStarted, b2i(stored), size, b2i(failed), speed, siteID); err != nil {
		return fmt.Errorf("count crawl of site %s: %w", siteID, err)
	}
	if !failed {
		return nil
	}
	var errs, most int64
	err := w.QueryRowContext(ctx, `UPDATE sites SET State=?, UDate=? WHERE Id=? AND State=? AND MaxErrors>0 AND Errors>=MaxErrors
		RETURNING Errors, MaxErrors`, crawl.SiteSuspended, l.TimeStarted, siteID, crawl.SiteActive).Scan(&errs, &most)
	if notFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("suspend site %s: %w", siteID, err)
	}
	reason := fmt.Sprintf("suspended by the crawler: %d errors reached max_errors %d (the last: %s %s)",
		errs, most, l.ExitCode, crawl.Truncate(l.URL, 200))
	if err := setStateReason(ctx, w, siteID, reason, l.TimeStarted); err != nil {
		return err
	}
	return holdSite(ctx, w, siteID, crawl.SiteSuspended)
}

// jsonList is a list of strings as a JSON array, for json_each.
func jsonList(l []string) string {
	b, _ := json.Marshal(l)
	return string(b)
}

// StartSiteRecrawls starts the periodic recrawl of every active site
// whose RecrawlDate has come (seed 001: at RecrawlDate, a site with a
// RecrawlPeriod is crawled again from its roots): its roots are due now,
// as recrawls, its Iterations counted and its next RecrawlDate set a
// period on. Its other URLs keep their own due dates (adaptive recrawl).
// It returns how many sites it started.
func (d *DB) StartSiteRecrawls(ctx context.Context, now int64) (int, error) {
	var n int
	err := d.tx(ctx, func(ctx context.Context, w *wtx) error {
		rows, err := w.QueryContext(ctx, `SELECT Id, RecrawlPeriod FROM sites WHERE State=? AND RecrawlPeriod>0
			AND coalesce(RecrawlDate, CDate+RecrawlPeriod*60)<=?`, crawl.SiteActive, now)
		if err != nil {
			return err
		}
		type due struct {
			id     string
			period int64
		}
		var sites []due
		for rows.Next() {
			var s due
			if err := rows.Scan(&s.id, &s.period); err != nil {
				rows.Close()
				return err
			}
			sites = append(sites, s)
		}
		rows.Close()
		n = len(sites)
		for _, s := range sites {
			if _, err := w.ExecContext(ctx, `UPDATE crawl_frontier SET state='due', due_unix_utc=?, crawl_type=?, version=version+1
				WHERE state IN ('crawled','due') AND url_id IN (SELECT u.url_id FROM url u JOIN sites_urls r ON r.URL=u.url WHERE r.Site_Id=?)`,
				now, crawl.CrawlRecrawl, s.id); err != nil {
				return err
			}
			if _, err := w.ExecContext(ctx, `UPDATE sites SET Iterations=Iterations+1, RecrawlDate=?, Errors=0, TcDate=? WHERE Id=?`,
				now+s.period*60, now, s.id); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("start site recrawls: %w", err)
	}
	return n, nil
}

// filtersJudgedProperty is the sites_properties row (URLMd5 ”) that
// holds the key of the filters a site's excluded URLs were last judged
// again by (pipeline: judgeSiteFiltersAgain).
const filtersJudgedProperty = "filters_judged"

// SiteFiltersJudged returns the key SiteJudged last noted for a site
// ("" if none).
func (d *DB) SiteFiltersJudged(ctx context.Context, siteID string) (string, error) {
	var key string
	err := d.queryRow(ctx, `SELECT coalesce(Value, '') FROM sites_properties WHERE Site_Id=? AND URLMd5='' AND Name=?`,
		siteID, filtersJudgedProperty).Scan(&key)
	if err != nil && !notFound(err) {
		return "", fmt.Errorf("read filters judged of site %s: %w", siteID, err)
	}
	return key, nil
}

// SiteJudged notes that a site's excluded URLs were judged again by the
// filters of the given key, at now.
func (d *DB) SiteJudged(ctx context.Context, siteID, key string, now int64) error {
	_, err := d.exec(ctx, `INSERT INTO sites_properties(Site_Id, URLMd5, Name, Value, UDate, CDate) VALUES(?,'',?,?,?,?)
		ON CONFLICT DO UPDATE SET Value=excluded.Value, UDate=excluded.UDate`, siteID, filtersJudgedProperty, key, now, now)
	if err != nil {
		return fmt.Errorf("note site %s judged: %w", siteID, err)
	}
	return nil
}
