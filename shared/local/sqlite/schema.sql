-- The seeds' tables, column for column (seed 000: crawler database, with
-- the url and mimetype tables it refers to; seed 002: summary database),
-- then the crawler's own extension tables, each named for what it holds.
-- Times are Unix seconds, UTC. Booleans are 0/1.

-- seed 000 -----------------------------------------------------------------
CREATE TABLE IF NOT EXISTS url (
  url_id INTEGER PRIMARY KEY,
  url    TEXT NOT NULL UNIQUE
);
CREATE TABLE IF NOT EXISTS mimetype (
  mimetype_id INTEGER PRIMARY KEY,
  mimetype    TEXT NOT NULL UNIQUE
);
CREATE TABLE IF NOT EXISTS agent (
  agent_id               INTEGER PRIMARY KEY,
  time_started_unix_utc  INTEGER NOT NULL,
  time_finished_unix_utc INTEGER,
  agent_uuid             TEXT NOT NULL UNIQUE,
  name                   TEXT NOT NULL,
  http_user_agent        TEXT
);
CREATE TABLE IF NOT EXISTS crawl_log (
  crawl_log_id          INTEGER PRIMARY KEY,
  agent_id              INTEGER NOT NULL REFERENCES agent(agent_id),
  url_id                INTEGER NOT NULL REFERENCES url(url_id),
  crawl_type            INTEGER NOT NULL,
  crawl_uuid            TEXT NOT NULL UNIQUE,
  time_started_unix_utc INTEGER NOT NULL,
  time_taken_ms         INTEGER NOT NULL,
  exit_code             INTEGER NOT NULL,
  message               TEXT
);
CREATE INDEX IF NOT EXISTS crawl_log_quickinfo ON crawl_log(url_id, time_started_unix_utc, exit_code);
CREATE TABLE IF NOT EXISTS request (
  request_id                    INTEGER PRIMARY KEY,
  crawl_log_id                  INTEGER NOT NULL REFERENCES crawl_log(crawl_log_id),
  url_id                        INTEGER NOT NULL REFERENCES url(url_id),
  time_sent_unix_utc            INTEGER NOT NULL,
  request_duration_ms           INTEGER,
  robotstxt_approved            INTEGER NOT NULL,
  exit_code                     INTEGER NOT NULL,
  server_last_modified_unix_utc INTEGER,
  http_status_code              INTEGER,
  http_etag                     TEXT
);
CREATE INDEX IF NOT EXISTS request_by_crawl_log ON request(crawl_log_id);
CREATE TABLE IF NOT EXISTS file (
  file_id                INTEGER PRIMARY KEY,
  crawl_log_id           INTEGER NOT NULL REFERENCES crawl_log(crawl_log_id),
  request_id             INTEGER REFERENCES request(request_id),
  url_id                 INTEGER NOT NULL REFERENCES url(url_id),
  last_modified_unix_utc INTEGER,
  file_size              INTEGER,
  mimetype_id            INTEGER NOT NULL REFERENCES mimetype(mimetype_id),
  canonical_url_id       INTEGER REFERENCES url(url_id)
);
CREATE INDEX IF NOT EXISTS file_by_crawl_log ON file(crawl_log_id);
CREATE TABLE IF NOT EXISTS file_text (
  file_id INTEGER PRIMARY KEY REFERENCES file(file_id),
  text    TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS redirect (
  redirect_id            INTEGER PRIMARY KEY,
  crawl_log_id           INTEGER NOT NULL REFERENCES crawl_log(crawl_log_id),
  request_id             INTEGER REFERENCES request(request_id),
  url_id                 INTEGER NOT NULL REFERENCES url(url_id),
  last_modified_unix_utc INTEGER,
  to_url_id              INTEGER NOT NULL REFERENCES url(url_id),
  information_source     INTEGER NOT NULL,
  is_permanent           INTEGER NOT NULL,
  by_security_policy     INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS redirect_by_crawl_log ON redirect(crawl_log_id);
CREATE TABLE IF NOT EXISTS crawl_candidate (
  url_id                              INTEGER PRIMARY KEY REFERENCES url(url_id),
  last_crawl_time_unix_utc            INTEGER,
  last_crawl_exit_code                INTEGER,
  last_contentful_crawl_time_unix_utc INTEGER,
  last_contentful_http_etag           TEXT
);

-- seed 002 -----------------------------------------------------------------
CREATE TABLE IF NOT EXISTS text_pile (
  text_pile_id      INTEGER PRIMARY KEY,
  blake2b512_digest BLOB NOT NULL UNIQUE,
  text              TEXT NOT NULL DEFAULT '',
  secondary_text    TEXT NOT NULL DEFAULT '',
  big_headlines     TEXT NOT NULL DEFAULT '',
  small_headlines   TEXT NOT NULL DEFAULT '',
  code_text         TEXT NOT NULL DEFAULT '',
  quote_text        TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS entity_generation (
  entity_generation_id   INTEGER PRIMARY KEY,
  entity_generation_uuid TEXT NOT NULL,
  url_id                 INTEGER NOT NULL REFERENCES url(url_id),
  url_fragment           TEXT,
  first_seen_unix_utc    INTEGER NOT NULL,
  last_seen_unix_utc     INTEGER NOT NULL,
  confirmed_end_unix_utc INTEGER,
  marked_duplicate       INTEGER NOT NULL DEFAULT 0,
  text_pile_id           INTEGER REFERENCES text_pile(text_pile_id),
  CHECK (first_seen_unix_utc <= last_seen_unix_utc)
);
CREATE UNIQUE INDEX IF NOT EXISTS entity_generation_by_uuid ON entity_generation(entity_generation_uuid);
CREATE INDEX IF NOT EXISTS entity_generation_by_first_seen ON entity_generation(url_id, url_fragment, first_seen_unix_utc);
CREATE INDEX IF NOT EXISTS entity_generation_by_text_pile ON entity_generation(text_pile_id, confirmed_end_unix_utc);
CREATE INDEX IF NOT EXISTS entity_generation_by_active ON entity_generation(marked_duplicate, confirmed_end_unix_utc);
CREATE TABLE IF NOT EXISTS duplicate_summary (
  subject_entity_generation_id      INTEGER NOT NULL REFERENCES entity_generation(entity_generation_id),
  duplicate_of_entity_generation_id INTEGER NOT NULL REFERENCES entity_generation(entity_generation_id),
  duplicate_status_start_unix_utc   INTEGER NOT NULL,
  duplicate_status_end_unix_utc     INTEGER
);
CREATE INDEX IF NOT EXISTS duplicate_summary_by_duplicate ON duplicate_summary(subject_entity_generation_id, duplicate_status_end_unix_utc);
CREATE TABLE IF NOT EXISTS crawl_summary (
  crawl_summary_id       INTEGER PRIMARY KEY,
  entity_generation_id   INTEGER REFERENCES entity_generation(entity_generation_id),
  was_robotstxt_approved INTEGER NOT NULL,
  crawl_type             INTEGER NOT NULL,
  crawl_uuid             TEXT NOT NULL,
  agent_uuid             TEXT NOT NULL,
  time_started_unix_utc  INTEGER NOT NULL,
  exit_code              INTEGER NOT NULL,
  request_duration_ms    INTEGER
);
CREATE UNIQUE INDEX IF NOT EXISTS crawl_summary_by_crawl_uuid ON crawl_summary(crawl_uuid);
CREATE TABLE IF NOT EXISTS http_summary (
  crawl_summary_id INTEGER PRIMARY KEY REFERENCES crawl_summary(crawl_summary_id),
  status_code      INTEGER NOT NULL,
  etag             TEXT
);
CREATE TABLE IF NOT EXISTS file_summary (
  entity_generation_id INTEGER PRIMARY KEY REFERENCES entity_generation(entity_generation_id),
  file_size            INTEGER,
  mimetype_id          INTEGER REFERENCES mimetype(mimetype_id),
  canonical_url_id     INTEGER REFERENCES url(url_id)
);
CREATE TABLE IF NOT EXISTS redirect_summary (
  entity_generation_id INTEGER PRIMARY KEY REFERENCES entity_generation(entity_generation_id),
  to_url_id            INTEGER NOT NULL REFERENCES url(url_id),
  information_source   INTEGER NOT NULL,
  by_security_policy   INTEGER NOT NULL DEFAULT 0,
  to_url_fragment      TEXT
);
-- link_summary is stored a row per generation: generation_links holds
-- a generation's links as one JSON array of rows, in page order, each
-- [link_to_url, flags, destination_type, link_locality,
-- link_to_fragment, html_tag_name, text], the flags one bit set
-- (crawl.LinkSummary.Flags: rel_nofollow, rel_me, rel_tag,
-- contains_headline, then in_header ... in_paragraph, lowest bit
-- first). link_summary is a view that reads them out as the seed's rows,
-- column for column; link_summary_id is the generation's id times 2^32
-- plus the link's place on the page, counted from 1 (json_extract, not
-- ->>, so that SQLite before 3.38 reads the schema). A crawl of the
-- make-bench tree writes 526 such rows rather than 169,000 (BENCHMARKS.md
-- "Link rows a row per page"). Databases made before 2026-11-28 had a
-- table, which migrateLinks turns into these.
CREATE TABLE IF NOT EXISTS generation_links (
  entity_generation_id INTEGER PRIMARY KEY REFERENCES entity_generation(entity_generation_id),
  links                TEXT NOT NULL
);
CREATE VIEW IF NOT EXISTS link_summary(link_summary_id, entity_generation_id, link_to_url, link_to_fragment,
  rel_nofollow, rel_me, rel_tag, in_header, in_footer, in_aside, in_nav, in_form, in_main, in_article, in_section,
  in_table, in_figure, in_address, in_code, in_headline, in_list, in_paragraph, contains_headline, destination_type,
  link_locality, html_tag_name, text) AS
  SELECT id, g, u, fragment,
    f&1, (f>>1)&1, (f>>2)&1, (f>>4)&1, (f>>5)&1, (f>>6)&1, (f>>7)&1, (f>>8)&1, (f>>9)&1, (f>>10)&1,
    (f>>11)&1, (f>>12)&1, (f>>13)&1, (f>>14)&1, (f>>15)&1, (f>>16)&1, (f>>17)&1, (f>>18)&1, (f>>3)&1,
    dest, locality, tag, text
  FROM (SELECT g.entity_generation_id*4294967296 + l.key + 1 AS id, g.entity_generation_id AS g,
      json_extract(l.value, '$[0]') AS u, json_extract(l.value, '$[1]') AS f, json_extract(l.value, '$[2]') AS dest,
      json_extract(l.value, '$[3]') AS locality, json_extract(l.value, '$[4]') AS fragment,
      json_extract(l.value, '$[5]') AS tag, json_extract(l.value, '$[6]') AS text
    FROM generation_links g, json_each(g.links) l);
CREATE TABLE IF NOT EXISTS document_description (
  entity_generation_id  INTEGER PRIMARY KEY REFERENCES entity_generation(entity_generation_id),
  time_created_unix_utc INTEGER,
  time_updated_unix_utc INTEGER,
  primary_language      TEXT,
  title                 TEXT,
  primary_headline      TEXT,
  description           TEXT,
  indexiness            INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS token (
  token_id   INTEGER PRIMARY KEY,
  token_text TEXT NOT NULL UNIQUE
);
-- token_statistics is stored a row per text pile: token_statistics_by_pile
-- holds a pile's counts as one JSON array of [token_id, occurances]
-- pairs, in token order, and token_statistics is a view that reads them
-- out as the seed's rows (same columns, "occurances" the seed's
-- spelling; the pair unique by construction). A crawl of the make-bench
-- tree writes 526 such rows rather than 322,000 (index.go, BENCHMARKS.md
-- "Token counts a row per pile"). A pile's counts are one row of it;
-- which piles hold a token is the full-text index's to say (fts5vocab),
-- or a scan, as it was with the table. Databases made before 2026-11-28
-- had a table, which migrateTokens turns into these.
CREATE TABLE IF NOT EXISTS token_statistics_by_pile (
  text_pile_id INTEGER PRIMARY KEY REFERENCES text_pile(text_pile_id),
  tokens       TEXT NOT NULL
);
CREATE VIEW IF NOT EXISTS token_statistics(token_id, text_pile_id, occurances) AS
  SELECT json_extract(t.value, '$[0]'), p.text_pile_id, json_extract(t.value, '$[1]')
  FROM token_statistics_by_pile p, json_each(p.tokens) t;
-- The seed's full-text index "is mainly derived from the text_pile and
-- document_description tables": it reads its text from them (FTS5's
-- external content, through full_text_entity_source) rather than keeping
-- a copy of every pile's text (12 MB of a 97 MB crawl of the make-bench
-- tree). Its rowid is the text pile's id. Columns read from it (title,
-- text, snippet()) come from the source view.
CREATE VIRTUAL TABLE IF NOT EXISTS full_text_entity_index USING fts5(
  text_pile_id UNINDEXED, any, title, description, text, secondary_text,
  big_headlines, small_headlines, code_text, quote_text,
  content='full_text_entity_source', content_rowid='text_pile_id'
);

-- seed 001 -----------------------------------------------------------------
-- The site object: sites, sites_urls, sites_filters, sites_properties,
-- column for column (the seed's capitalized names; its DateTime fields
-- are Unix seconds here, as every time in this database). Enumerations
-- are the seed's integers: State 1 active, 2 disabled, 3 suspended;
-- URLType 0 regular, 1 single, 3 collect-all; filter Type 0 include,
-- 1 exclude, Mode 0 URLs, 1 media; sites_urls State 0 enabled.
CREATE TABLE IF NOT EXISTS sites (
  Id              TEXT PRIMARY KEY,
  UDate           INTEGER,
  TcDate          INTEGER,
  CDate           INTEGER NOT NULL,
  Resources       INTEGER NOT NULL DEFAULT 0,
  Contents        INTEGER NOT NULL DEFAULT 0,
  CollectedURLs   INTEGER NOT NULL DEFAULT 0,
  NewURLs         INTEGER NOT NULL DEFAULT 0,
  DeletedURLs     INTEGER NOT NULL DEFAULT 0,
  Iterations      INTEGER NOT NULL DEFAULT 0,
  State           INTEGER NOT NULL DEFAULT 1,
  Priority        INTEGER NOT NULL DEFAULT 0,
  MaxURLs         INTEGER NOT NULL DEFAULT 0,
  MaxURLsFromPage INTEGER NOT NULL DEFAULT 0,
  MaxResources    INTEGER NOT NULL DEFAULT 0,
  MaxErrors       INTEGER NOT NULL DEFAULT 0,
  MaxResourceSize INTEGER NOT NULL DEFAULT 0,
  RequestDelay    INTEGER NOT NULL DEFAULT 0,
  ProcessingDelay INTEGER NOT NULL DEFAULT 0,
  HTTPTimeout     INTEGER NOT NULL DEFAULT 0,
  ErrorMask       INTEGER NOT NULL DEFAULT 0,
  Errors          INTEGER NOT NULL DEFAULT 0,
  Size            INTEGER NOT NULL DEFAULT 0,
  AVGSpeed        REAL NOT NULL DEFAULT 0,
  AVGSpeedCounter INTEGER NOT NULL DEFAULT 0,
  URLType         INTEGER NOT NULL DEFAULT 0,
  User_Id         INTEGER NOT NULL DEFAULT 0,
  RecrawlPeriod   INTEGER NOT NULL DEFAULT 0,
  RecrawlDate     INTEGER,
  FetchType       INTEGER NOT NULL DEFAULT 1
);
CREATE TABLE IF NOT EXISTS sites_filters (
  Site_Id TEXT NOT NULL REFERENCES sites(Id),
  Pattern TEXT NOT NULL,
  Type    INTEGER NOT NULL,
  UDate   INTEGER,
  CDate   INTEGER NOT NULL,
  Mode    INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS sites_filters_by_site ON sites_filters(Site_Id);
-- Crawled, Processed, CrDate and PrDate: deprecated in the seed, never written.
CREATE TABLE IF NOT EXISTS sites_urls (
  Site_Id   TEXT NOT NULL REFERENCES sites(Id),
  URL       TEXT NOT NULL,
  State     INTEGER NOT NULL DEFAULT 0,
  Crawled   INTEGER,
  Processed INTEGER,
  CrDate    INTEGER,
  PrDate    INTEGER,
  CDate     INTEGER NOT NULL,
  User_Id   INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (Site_Id, URL)
);
CREATE TABLE IF NOT EXISTS sites_properties (
  Site_Id TEXT NOT NULL REFERENCES sites(Id),
  URLMd5  TEXT NOT NULL DEFAULT '',
  Name    TEXT NOT NULL,
  Value   TEXT,
  UDate   INTEGER,
  CDate   INTEGER NOT NULL,
  PRIMARY KEY (Site_Id, URLMd5, Name)
);

-- extensions ----------------------------------------------------------------
-- crawl_frontier: the scheduler's per-URL state beside crawl_candidate.
CREATE TABLE IF NOT EXISTS crawl_frontier (
  url_id                            INTEGER PRIMARY KEY REFERENCES crawl_candidate(url_id),
  host                              TEXT NOT NULL,
  state                             TEXT NOT NULL,
  hops                              INTEGER NOT NULL,
  priority                          INTEGER NOT NULL DEFAULT 0,
  due_unix_utc                      INTEGER NOT NULL DEFAULT 0,
  crawl_type                        INTEGER NOT NULL,
  crawl_uuid                        TEXT,
  queued_unix_utc                   INTEGER NOT NULL DEFAULT 0,
  last_contentful_modified_unix_utc INTEGER,
  n_redirs                          INTEGER NOT NULL DEFAULT 0,
  orig_url                          TEXT,
  redirect_chain                    TEXT,
  discovered_unix_utc               INTEGER NOT NULL,
  parent_url                        TEXT,
  max_depth                         INTEGER,
  version                           INTEGER NOT NULL,
  site_id                           TEXT, -- the site it belongs to (seed 001), NULL for none
  mrate                             REAL NOT NULL DEFAULT 0, -- seed 001 MRate (crawl/revisit.go)
  mrate_counter                     INTEGER NOT NULL DEFAULT 0, -- seed 001 MRateCounter
  recrawl_every                     INTEGER NOT NULL DEFAULT 0 -- seconds: the period its next visit follows
);
CREATE INDEX IF NOT EXISTS crawl_frontier_due ON crawl_frontier(state, due_unix_utc, priority);
-- In release order (DueCandidates), so that a release reads its few rows
-- instead of sorting every due candidate: on a large crawl tens of
-- thousands are due at once.
CREATE INDEX IF NOT EXISTS crawl_frontier_release ON crawl_frontier(state, priority DESC, due_unix_utc, url_id);
-- The same order host by host, for releases shared among the hosts
-- with URLs due (DueCandidates), and for counting each host's released
-- URLs.
CREATE INDEX IF NOT EXISTS crawl_frontier_host_release ON crawl_frontier(state, host, priority DESC, due_unix_utc, url_id);
-- Whether a host has a URL due by now, a seek (DueCandidates): in the
-- index above, a host whose URLs are all due later (a recrawl's) is
-- walked to its end.
CREATE INDEX IF NOT EXISTS crawl_frontier_host_due ON crawl_frontier(state, host, due_unix_utc);
-- A site's URLs, for holding them while it is disabled and counting them.
CREATE INDEX IF NOT EXISTS crawl_frontier_by_site ON crawl_frontier(site_id, state) WHERE site_id IS NOT NULL;
-- robots_file: each origin's robots.txt as last fetched, so that a run
-- that resumes a crawl keeps the rules until they expire (RFC 9309
-- allows caching them up to 24 h) instead of fetching them again.
CREATE TABLE IF NOT EXISTS robots_file (
  origin        TEXT PRIMARY KEY,
  status        INTEGER NOT NULL,
  body          BLOB NOT NULL,
  fetched_at_ms INTEGER NOT NULL
);
-- crawl_scope: the hosts the crawl may fetch (the seeds' hosts).
CREATE TABLE IF NOT EXISTS crawl_scope (
  host TEXT PRIMARY KEY
);
-- recrawl_pass: a `crawler crawl --recrawl` pass under way, from when
-- its run made every known URL due (MarkAllDue) until a run ends with
-- nothing due: a --recrawl run stopped before then (a signal, a kill,
-- --max-pages) leaves the row, and the same command run again continues
-- the pass (its URLs not yet crawled are still due) instead of making
-- every URL due once more. One row at most.
CREATE TABLE IF NOT EXISTS recrawl_pass (
  id               INTEGER PRIMARY KEY CHECK (id = 1),
  started_unix_utc INTEGER NOT NULL
);
-- host_back_off: until when a host asked not to be sent requests (a
-- 429 or 503 whose Retry-After is longer than a crawl waits), kept past
-- the run that was told (fetch.BackOffStore): the next run sends the
-- host nothing until then either. Rows past their time are deleted by
-- the next write.
CREATE TABLE IF NOT EXISTS host_back_off (
  host           TEXT PRIMARY KEY,
  until_unix_ms  INTEGER NOT NULL
);
-- file_body: where a file's raw body is in the blob store (a record of a
-- WARC file, or a file of its own under raw/ before), the response
-- headers the parser reads, and the body's SHA-256 (hex; Null before it
-- was kept, when the key was the body's content address).
CREATE TABLE IF NOT EXISTS file_body (
  file_id          INTEGER PRIMARY KEY REFERENCES file(file_id),
  body_key         TEXT NOT NULL,
  charset          TEXT,
  content_type     TEXT,
  content_language TEXT,
  x_robots_tag     TEXT,
  body_sha256      TEXT
);
-- A body already kept is found by its hash, and not kept again.
CREATE INDEX IF NOT EXISTS file_body_by_sha256 ON file_body(body_sha256) WHERE body_sha256 IS NOT NULL;
-- generation_content: what a generation's content is identified by (text
-- pile digest, body hash or redirect target) and whether it is noindex.
CREATE TABLE IF NOT EXISTS generation_content (
  entity_generation_id INTEGER PRIMARY KEY REFERENCES entity_generation(entity_generation_id),
  content_key          TEXT NOT NULL,
  body_key             TEXT,
  noindex              INTEGER NOT NULL DEFAULT 0
);
-- text_pile_unindexed: text piles whose full_text_entity_index row and
-- token counts (token_statistics_by_pile) are not written yet (index.go):
-- the pile's title and description for the full-text row, and its token
-- counts.
CREATE TABLE IF NOT EXISTS text_pile_unindexed (
  text_pile_id INTEGER PRIMARY KEY REFERENCES text_pile(text_pile_id),
  title        TEXT NOT NULL,
  description  TEXT,
  tokens       BLOB
);
-- text_pile_title: the title and description a text pile's full-text
-- row was written with (those of the first document that had the pile),
-- which the index reads back through full_text_entity_source.
CREATE TABLE IF NOT EXISTS text_pile_title (
  text_pile_id INTEGER PRIMARY KEY REFERENCES text_pile(text_pile_id),
  title        TEXT NOT NULL,
  description  TEXT
);
-- full_text_entity_source: the content of full_text_entity_index, the
-- indexed piles' text with their titles, column for column, each text
-- column's first 1,048,576 characters (sqlite.MaxIndexedText): the index
-- is written from this view (indexText), so that it holds what the view
-- says, for snippets, a rebuild and FTS5's integrity-check alike. Made
-- again at every open: an earlier version's had no bound.
DROP VIEW IF EXISTS full_text_entity_source;
CREATE VIEW full_text_entity_source AS
  SELECT p.text_pile_id AS text_pile_id, 'any' AS "any", t.title AS title, t.description AS description,
    substr(p.text, 1, 1048576) AS text, substr(p.secondary_text, 1, 1048576) AS secondary_text,
    substr(p.big_headlines, 1, 1048576) AS big_headlines, substr(p.small_headlines, 1, 1048576) AS small_headlines,
    substr(p.code_text, 1, 1048576) AS code_text, substr(p.quote_text, 1, 1048576) AS quote_text
  FROM text_pile p JOIN text_pile_title t ON t.text_pile_id = p.text_pile_id;
-- text_pile_simhash: a text pile's SimHash (crawl/simhash.go) as a
-- signed integer, and its four 16-bit bands, each indexed: a
-- near-duplicate shares at least one band with its original.
CREATE TABLE IF NOT EXISTS text_pile_simhash (
  text_pile_id INTEGER PRIMARY KEY REFERENCES text_pile(text_pile_id),
  simhash      INTEGER NOT NULL,
  band0        INTEGER NOT NULL,
  band1        INTEGER NOT NULL,
  band2        INTEGER NOT NULL,
  band3        INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS text_pile_simhash_band0 ON text_pile_simhash(band0);
CREATE INDEX IF NOT EXISTS text_pile_simhash_band1 ON text_pile_simhash(band1);
CREATE INDEX IF NOT EXISTS text_pile_simhash_band2 ON text_pile_simhash(band2);
CREATE INDEX IF NOT EXISTS text_pile_simhash_band3 ON text_pile_simhash(band3);
-- queue_message: the embedded pipeline's durable queues (SQS semantics:
-- a received message is invisible until deleted or its lease runs out).
CREATE TABLE IF NOT EXISTS queue_message (
  message_id    INTEGER PRIMARY KEY,
  queue         TEXT NOT NULL,
  body          BLOB NOT NULL,
  visible_at_ms INTEGER NOT NULL,
  receive_count INTEGER NOT NULL DEFAULT 0,
  reason        TEXT
);
CREATE INDEX IF NOT EXISTS queue_message_visible ON queue_message(queue, visible_at_ms);
