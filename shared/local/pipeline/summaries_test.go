package pipeline

import (
	"context"
	"database/sql"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/text/encoding/japanese"

	"github.com/serverless-crawler/crawler/shared/crawl"
)

// summarySite serves pages whose summaries are known in advance (issue
// #4): described, encoded, sectioned, linked, duplicated, conditional,
// changing and unchanging pages.
type summarySite struct {
	*httptest.Server
	changed atomic.Bool // /changing.html serves its second version
	mu      sync.Mutex
	counts  map[string]int // requests by path
	n304    int            // 304 answers sent
}

const (
	aboutPage = `<!DOCTYPE html>
<html lang="en-GB"><head>
<title>About the Harbour Light</title>
<meta name="description" content="Who keeps the light, and how.">
<meta property="og:description" content="Not this one.">
<meta property="og:site_name" content="Harbour Light">
<meta property="article:published_time" content="2024-03-01T10:00:00Z">
</head><body>
<header><h1>Harbour Light</h1></header>
<article><h1>About the lighthouse</h1>
<p>The keeper lights the lamp at dusk
   and puts it out at dawn.</p></article>
</body></html>`

	frenchPage = `<!DOCTYPE html><html><head><title>Le phare</title></head>
<body><p>Le gardien allume la lampe au crépuscule.</p></body></html>`

	germanPage = `<!DOCTYPE html><html><head><title>Der Leuchtturm</title></head><body><main>
<p>Der Leuchtturm steht seit über hundert Jahren am Eingang des Hafens. Jeden Abend steigt der Wärter
die Treppe hinauf und zündet die Lampe an, damit die Schiffe den sicheren Weg in den Hafen finden.
Bei Nebel wird zusätzlich das Horn eingeschaltet, das man weit über das Wasser hören kann.</p>
</main></body></html>`

	codePage = `<!DOCTYPE html><html lang="en"><head><title>Lamp commands</title></head><body><main>
<h2>Lighting the lamp</h2>
<p>Run the command below.</p>
<pre><code>lamp --on
lamp --status</code></pre>
<blockquote><p>The light must never go out.</p></blockquote>
<p>As the keeper said, <q>keep it burning</q>.</p>
<h3>Small print</h3>
<h4>Smaller print</h4>
</main></body></html>`

	linksPage = `<!DOCTYPE html><html lang="en"><head><title>Links</title></head><body>
<header><a href="/">home from header</a></header>
<nav><ul><li><a href="/about.html">about from nav</a></li></ul></nav>
<main><article><p>Read the <a href="/code.html">code from article</a>.</p>
<p><a href="/hidden.html" rel="nofollow">nofollow from article</a></p></article></main>
<aside><a href="/stable.html">stable from aside</a></aside>
<footer><a href="/dup-a.html#top">dup from footer</a></footer>
</body></html>`

	dupPage = `<!DOCTYPE html><html lang="en"><head><title>Tide tables</title></head>
<body><p>The narwhal tide table is printed twice.</p></body></html>`

	// The article of two mirror pages that differ only in their
	// chrome: near duplicates (the same content, so SimHash distance
	// 0), not exact ones (the chrome is part of the text pile).
	mirrorArticle = `<main><h1>Lighthouse keeping</h1><p>The keeper of the harbour light climbs the
spiral stair each evening, trims the wick, polishes the great lens and winds the clockwork that turns
it. Through the night the beam sweeps the bay every ten seconds, and the keeper writes the weather,
the ships that pass and the hours of fog in the logbook. At dawn the lamp is put out, the curtains
are drawn around the lens to keep the sun from it, and the keeper sleeps until the afternoon, when
the brass must be cleaned again and the oil tank filled for the next night.</p></main>`

	noindexPage = `<!DOCTYPE html><html lang="en"><head><title>Private</title>
<meta name="robots" content="noindex"></head>
<body><p>The okapi log is not for search engines.</p></body></html>`

	stablePage = `<!DOCTYPE html><html lang="en"><head><title>Stable</title></head>
<body><p>The stable page never changes its pelican.</p></body></html>`

	etagPage = `<!DOCTYPE html><html lang="en"><head><title>Tagged</title></head>
<body><p>The tagged page answers with an ETag and a puffin.</p></body></html>`

	changingV1 = `<!DOCTYPE html><html lang="en"><head><title>Changing</title></head>
<body><p>The changing page says zebra.</p></body></html>`

	changingV2 = `<!DOCTYPE html><html lang="en"><head><title>Changing</title></head>
<body><p>The changing page says walrus.</p></body></html>`

	hubPage = `<!DOCTYPE html><html lang="en"><head><title>Hub</title></head><body><ul>
<li><a href="/about.html">about</a></li><li><a href="/fr.html">fr</a></li><li><a href="/de.html">de</a></li>
<li><a href="/latin1.html">latin1</a></li><li><a href="/sjis.html">sjis</a></li>
<li><a href="/code.html">code</a></li><li><a href="/links.html">links</a></li>
<li><a href="/dup-a.html">dup a</a></li><li><a href="/dup-b.html">dup b</a></li>
<li><a href="/noindex.html">noindex</a></li><li><a href="/stable.html">stable</a></li>
<li><a href="/etag.html">etag</a></li><li><a href="/changing.html">changing</a></li>
<li><a href="/mirror-a.html">mirror a</a></li><li><a href="/mirror-b.html">mirror b</a></li>
<li><a href="/notes.txt">notes</a></li>
</ul></body></html>`

	// A plain text file: read as a document of words, searched like a
	// page; the URL in it is not a link.
	notesText = "\n-----\nKeeper's notes   for the winter\n=====\n\nThe lamp room smells of paraffin and brass polish.\n" +
		"Each night the keeper counts the cormorants on the rocks below the tower and writes the number in the margin of the log.\n" +
		"In January the storms kept the supply boat away for three weeks, and the keeper rationed the oil.\n" +
		"See http://example.com/not-a-link.html for the tide tables.\n"
)

// Latin-1 bytes; the charset is named only in a <meta http-equiv>.
const latin1Page = "<!DOCTYPE html><html lang=\"fr\"><head>\n" +
	"<meta http-equiv=\"Content-Type\" content=\"text/html; charset=iso-8859-1\">\n" +
	"<title>Caf\xe9 du port</title></head>\n" +
	"<body><p>Le caf\xe9 sert une cr\xe8me br\xfbl\xe9e.</p></body></html>"

// The Shift_JIS page's text, in UTF-8; it is served encoded.
const (
	sjisTitle = "灯台の案内"
	sjisText  = "灯台は港の入り口に立っています。毎晩、灯台守が階段を上ってランプに火をともします。霧の日には霧笛も鳴らします。"
)

func newSummarySite(t *testing.T) *summarySite {
	t.Helper()
	sjis, err := japanese.ShiftJIS.NewEncoder().String("<!DOCTYPE html><html><head><meta charset=\"shift_jis\"><title>" +
		sjisTitle + "</title></head><body><p>" + sjisText + "</p></body></html>")
	if err != nil {
		t.Fatal(err)
	}
	s := &summarySite{counts: map[string]int{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.counts[r.URL.Path]++
		s.mu.Unlock()
		html := func(body string) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Write([]byte(body))
		}
		switch r.URL.Path {
		case "/":
			html(hubPage)
		case "/about.html":
			html(aboutPage)
		case "/fr.html":
			w.Header().Set("Content-Language", "fr-CA, en")
			html(frenchPage)
		case "/de.html":
			html(germanPage)
		case "/latin1.html":
			w.Header().Set("Content-Type", "text/html") // no charset
			w.Write([]byte(latin1Page))
		case "/sjis.html":
			w.Header().Set("Content-Type", "text/html") // no charset
			w.Write([]byte(sjis))
		case "/code.html":
			html(codePage)
		case "/links.html":
			html(linksPage)
		case "/dup-a.html", "/dup-b.html":
			html(dupPage)
		case "/mirror-a.html":
			html(`<!DOCTYPE html><html lang="en"><head><title>Keeping</title></head><body>
<nav><a href="/">Harbour home</a></nav>` + mirrorArticle + `<footer>Mirror A, updated daily</footer></body></html>`)
		case "/mirror-b.html":
			html(`<!DOCTYPE html><html lang="en"><head><title>Keeping</title></head><body>
<nav><a href="/">Coast guard archive</a> <a href="/about.html">about</a></nav>` + mirrorArticle +
				`<footer>Mirror B, kept by the coast guard</footer></body></html>`)
		case "/noindex.html":
			html(noindexPage)
		case "/stable.html":
			html(stablePage)
		case "/etag.html":
			w.Header().Set("ETag", `"v1"`)
			if r.Header.Get("If-None-Match") == `"v1"` {
				s.mu.Lock()
				s.n304++
				s.mu.Unlock()
				w.WriteHeader(http.StatusNotModified)
				return
			}
			html(etagPage)
		case "/notes.txt":
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.Write([]byte(notesText))
		case "/changing.html":
			if s.changed.Load() {
				html(changingV2)
			} else {
				html(changingV1)
			}
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(s.Close)
	return s
}

// oneDuplicate returns the original and the duplicate of two copies, of
// which exactly one must be marked duplicate.
func oneDuplicate(t *testing.T, a, b generation) (orig, dup generation) {
	t.Helper()
	if a.duplicate == b.duplicate {
		t.Fatalf("marked_duplicate: a %v, b %v; want exactly one", a.duplicate, b.duplicate)
	}
	if a.duplicate {
		return b, a
	}
	return a, b
}

// generation is a row of entity_generation.
type generation struct {
	id, firstSeen, lastSeen int64
	confirmedEnd            sql.NullInt64
	duplicate               bool
	pile                    sql.NullInt64
}

// TestSummariesLikeTheSeed is issue #4's acceptance test: pages with
// known answers are crawled, then recrawled, and the seed 002 tables read.
func TestSummariesLikeTheSeed(t *testing.T) {
	ctx := context.Background()
	site := newSummarySite(t)
	dir := t.TempDir()
	cfg := testConfig(site.URL + "/")
	cfg.Fetch.Delay = 0

	res := crawlSite(t, dir, cfg)
	if res.DeadLetters != 0 {
		t.Fatalf("first crawl: %d dead letters", res.DeadLetters)
	}
	firstEnd := time.Now().Unix()

	dd, err := OpenDataDir(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	db := dd.DB.SQL()
	u := func(path string) string { return site.URL + path }
	gens := func(path string) []generation {
		t.Helper()
		rows, err := db.Query(`SELECT g.entity_generation_id, g.first_seen_unix_utc, g.last_seen_unix_utc,
			g.confirmed_end_unix_utc, g.marked_duplicate, g.text_pile_id
			FROM entity_generation g JOIN url u ON u.url_id=g.url_id WHERE u.url=?
			ORDER BY g.first_seen_unix_utc, g.entity_generation_id`, u(path))
		if err != nil {
			t.Fatalf("generations of %s: %v", path, err)
		}
		defer rows.Close()
		var out []generation
		for rows.Next() {
			var g generation
			if err := rows.Scan(&g.id, &g.firstSeen, &g.lastSeen, &g.confirmedEnd, &g.duplicate, &g.pile); err != nil {
				t.Fatal(err)
			}
			out = append(out, g)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return out
	}
	// only returns the URL's one generation, failing the test if it has
	// any other number of them.
	only := func(path string) generation {
		t.Helper()
		g := gens(path)
		if len(g) != 1 {
			t.Fatalf("%s has %d generations, want 1: %+v", path, len(g), g)
		}
		return g[0]
	}
	search := func(q string) []string {
		t.Helper()
		hits, err := dd.DB.Search(ctx, q, 10)
		if err != nil {
			t.Fatalf("search %q: %v", q, err)
		}
		var urls []string
		for _, h := range hits {
			urls = append(urls, h.URL)
		}
		return urls
	}

	t.Run("description", func(t *testing.T) {
		type desc struct {
			title, headline, description, language sql.NullString
			created                                sql.NullInt64
		}
		read := func(path string) desc {
			t.Helper()
			var d desc
			err := db.QueryRow(`SELECT d.title, d.primary_headline, d.description, d.primary_language, d.time_created_unix_utc
				FROM document_description d WHERE d.entity_generation_id=?`, only(path).id).
				Scan(&d.title, &d.headline, &d.description, &d.language, &d.created)
			if err != nil {
				t.Fatalf("document_description of %s: %v", path, err)
			}
			return d
		}
		str := func(s string) sql.NullString { return sql.NullString{String: s, Valid: true} }
		about := read("/about.html")
		want := desc{title: str("About the Harbour Light"), headline: str("About the lighthouse"),
			description: str("Who keeps the light, and how."), language: str("en"),
			created: sql.NullInt64{Int64: time.Date(2024, 3, 1, 10, 0, 0, 0, time.UTC).Unix(), Valid: true}}
		if about != want {
			t.Errorf("/about.html: %+v, want %+v", about, want)
		}
		notes := read("/notes.txt")
		if want := (desc{headline: str("Keeper's notes for the winter"), language: str("en")}); notes != want {
			t.Errorf("/notes.txt: %+v, want %+v", notes, want)
		}
		for path, lang := range map[string]sql.NullString{
			"/fr.html":     str("fr"), // Content-Language
			"/de.html":     str("de"), // detected from the text
			"/latin1.html": str("fr"),
			"/sjis.html":   str("ja"), // detected from the text
			"/code.html":   str("en"),
		} {
			if got := read(path).language; got != lang {
				t.Errorf("%s: primary_language %v, want %v", path, got, lang)
			}
		}
	})

	pile := func(path string) (text, secondary, big, small, code, quote string) {
		t.Helper()
		g := only(path)
		if err := db.QueryRow(`SELECT text, secondary_text, big_headlines, small_headlines, code_text, quote_text
			FROM text_pile WHERE text_pile_id=?`, g.pile).Scan(&text, &secondary, &big, &small, &code, &quote); err != nil {
			t.Fatalf("text pile of %s: %v", path, err)
		}
		return
	}

	t.Run("charsets", func(t *testing.T) {
		var title string
		var fileText string
		if err := db.QueryRow(`SELECT d.title FROM document_description d WHERE d.entity_generation_id=?`,
			only("/latin1.html").id).Scan(&title); err != nil {
			t.Fatal(err)
		}
		if text, _, _, _, _, _ := pile("/latin1.html"); title != "Café du port" || text != "Le café sert une crème brûlée." {
			t.Errorf("Latin-1 page: title %q, text %q", title, text)
		}
		if err := db.QueryRow(`SELECT ft.text FROM file_text ft JOIN file f ON f.file_id=ft.file_id JOIN url u ON u.url_id=f.url_id
			WHERE u.url=?`, u("/latin1.html")).Scan(&fileText); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(fileText, "<title>Café du port</title>") {
			t.Errorf("Latin-1 file_text is not UTF-8: %q", fileText)
		}
		if err := db.QueryRow(`SELECT d.title FROM document_description d WHERE d.entity_generation_id=?`,
			only("/sjis.html").id).Scan(&title); err != nil {
			t.Fatal(err)
		}
		if text, _, _, _, _, _ := pile("/sjis.html"); title != sjisTitle || text != sjisText {
			t.Errorf("Shift_JIS page: title %q, text %q", title, text)
		}
	})

	t.Run("text by kind", func(t *testing.T) {
		text, secondary, big, small, code, quote := pile("/code.html")
		for _, c := range []struct{ field, got, want string }{
			{"text", text, "Run the command below.\nAs the keeper said, ."},
			{"secondary_text", secondary, ""},
			{"big_headlines", big, "Lighting the lamp"},
			{"small_headlines", small, "Small print\nSmaller print"},
			{"code_text", code, "lamp --on\nlamp --status"},
			{"quote_text", quote, "The light must never go out.\nkeep it burning"},
		} {
			if c.got != c.want {
				t.Errorf("/code.html %s = %q, want %q", c.field, c.got, c.want)
			}
		}
		text, secondary, big, _, _, _ = pile("/about.html")
		if text != "The keeper lights the lamp at dusk and puts it out at dawn." || secondary != "Harbour Light" || big != "About the lighthouse" {
			t.Errorf("/about.html text %q, secondary %q, big %q", text, secondary, big)
		}
	})

	t.Run("duplicates", func(t *testing.T) {
		a, b := only("/dup-a.html"), only("/dup-b.html")
		if !a.pile.Valid || a.pile != b.pile {
			t.Errorf("identical pages have text piles %v and %v, want one shared", a.pile, b.pile)
		}
		orig, dup := oneDuplicate(t, a, b)
		var of int64
		var end sql.NullInt64
		if err := db.QueryRow(`SELECT duplicate_of_entity_generation_id, duplicate_status_end_unix_utc FROM duplicate_summary
			WHERE subject_entity_generation_id=?`, dup.id).Scan(&of, &end); err != nil {
			t.Fatalf("duplicate_summary: %v", err)
		}
		if of != orig.id || end.Valid {
			t.Errorf("duplicate_summary: duplicate of %d (end %v), want %d (open)", of, end, orig.id)
		}
		var n int
		if err := db.QueryRow(`SELECT count(*) FROM duplicate_summary WHERE subject_entity_generation_id=?`, orig.id).Scan(&n); err != nil || n != 0 {
			t.Errorf("the original has %d duplicate_summary rows (%v)", n, err)
		}
		// The shared pile's tokens are counted once.
		if err := db.QueryRow(`SELECT count(*) FROM token_statistics s JOIN token k ON k.token_id=s.token_id
			WHERE k.token_text='narwhal'`).Scan(&n); err != nil || n != 1 {
			t.Errorf("token narwhal has %d token_statistics rows (%v), want 1", n, err)
		}
		var code crawl.ExitCode
		if err := db.QueryRow(`SELECT exit_code FROM crawl_summary WHERE entity_generation_id=?`, dup.id).Scan(&code); err != nil || code != crawl.ExitDuplicate {
			t.Errorf("crawl_summary of the duplicate: exit %v (%v), want duplicate", code, err)
		}
	})

	t.Run("near duplicates", func(t *testing.T) {
		a, b := only("/mirror-a.html"), only("/mirror-b.html")
		if !a.pile.Valid || !b.pile.Valid || a.pile == b.pile {
			t.Errorf("mirrors with other chrome have text piles %v and %v, want one each", a.pile, b.pile)
		}
		orig, dup := oneDuplicate(t, a, b)
		var of int64
		if err := db.QueryRow(`SELECT duplicate_of_entity_generation_id FROM duplicate_summary
			WHERE subject_entity_generation_id=? AND duplicate_status_end_unix_utc IS NULL`, dup.id).Scan(&of); err != nil || of != orig.id {
			t.Errorf("duplicate_summary: duplicate of %d (%v), want %d", of, err, orig.id)
		}
	})

	t.Run("links", func(t *testing.T) {
		type link struct {
			flags                 [15]bool
			nofollow              bool
			fragment, target, tag sql.NullString
		}
		// Flag order: header, footer, aside, nav, form, main, article,
		// section, table, figure, address, code, headline, list, paragraph.
		const (
			header = iota
			footer
			aside
			nav
			_
			main
			article
			_
			_
			_
			_
			_
			_
			list
			paragraph
		)
		set := func(idx ...int) (f [15]bool) {
			for _, i := range idx {
				f[i] = true
			}
			return f
		}
		g := only("/links.html")
		rows, err := db.Query(`SELECT l.text, l.in_header, l.in_footer, l.in_aside, l.in_nav, l.in_form, l.in_main,
			l.in_article, l.in_section, l.in_table, l.in_figure, l.in_address, l.in_code, l.in_headline, l.in_list,
			l.in_paragraph, l.rel_nofollow, l.link_to_fragment, u.url, l.html_tag_name
			FROM link_summary l JOIN url u ON u.url_id=l.link_to_url WHERE l.entity_generation_id=?`, g.id)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		got := map[string]link{}
		for rows.Next() {
			var text string
			var l link
			f := &l.flags
			if err := rows.Scan(&text, &f[0], &f[1], &f[2], &f[3], &f[4], &f[5], &f[6], &f[7], &f[8], &f[9], &f[10],
				&f[11], &f[12], &f[13], &f[14], &l.nofollow, &l.fragment, &l.target, &l.tag); err != nil {
				t.Fatal(err)
			}
			got[text] = l
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		str := func(s string) sql.NullString { return sql.NullString{String: s, Valid: true} }
		a := str("a")
		want := map[string]link{
			"home from header":      {flags: set(header), target: str(u("/")), tag: a},
			"about from nav":        {flags: set(nav, list), target: str(u("/about.html")), tag: a},
			"code from article":     {flags: set(main, article, paragraph), target: str(u("/code.html")), tag: a},
			"nofollow from article": {flags: set(main, article, paragraph), nofollow: true, target: str(u("/hidden.html")), tag: a},
			"stable from aside":     {flags: set(aside), target: str(u("/stable.html")), tag: a},
			"dup from footer":       {flags: set(footer), fragment: str("top"), target: str(u("/dup-a.html")), tag: a},
		}
		if len(got) != len(want) {
			t.Errorf("%d links, want %d: %+v", len(got), len(want), got)
		}
		for text, w := range want {
			if l, ok := got[text]; !ok {
				t.Errorf("no link %q", text)
			} else if l != w {
				t.Errorf("link %q: %+v, want %+v", text, l, w)
			}
		}
		site.mu.Lock()
		hidden := site.counts["/hidden.html"]
		site.mu.Unlock()
		if hidden != 0 {
			t.Errorf("the nofollow link was followed (%d requests)", hidden)
		}
		var plainLinks int
		if err := db.QueryRow(`SELECT count(*) FROM link_summary WHERE entity_generation_id=?`, only("/notes.txt").id).Scan(&plainLinks); err != nil {
			t.Fatal(err)
		}
		if plainLinks != 0 {
			t.Errorf("the plain text file has %d links, want none (a URL in its text is not a link)", plainLinks)
		}
	})

	t.Run("search before recrawl", func(t *testing.T) {
		if got := search("dusk"); len(got) == 0 || got[0] != u("/about.html") {
			t.Errorf("search dusk: %v, want /about.html first", got)
		}
		if got := search("zebra"); !slices.Equal(got, []string{u("/changing.html")}) {
			t.Errorf("search zebra: %v, want /changing.html", got)
		}
		if got := search("cormorants"); !slices.Equal(got, []string{u("/notes.txt")}) {
			t.Errorf("search cormorants: %v, want the plain text file /notes.txt", got)
		}
		// The noindex page and the duplicate are in the index, but search
		// does not return them.
		for q, n := range map[string]int{"okapi": 1, "narwhal": 1} {
			var got int
			if err := db.QueryRow(`SELECT count(*) FROM full_text_entity_index WHERE full_text_entity_index MATCH ?`, q).Scan(&got); err != nil || got != n {
				t.Errorf("%s: %d full-text rows (%v), want %d", q, got, err, n)
			}
		}
		if got := search("okapi"); len(got) != 0 {
			t.Errorf("search okapi found the noindex page: %v", got)
		}
		dupOf := map[bool]string{only("/dup-a.html").duplicate: "/dup-a.html", only("/dup-b.html").duplicate: "/dup-b.html"}
		if got := search("narwhal"); !slices.Equal(got, []string{u(dupOf[false])}) {
			t.Errorf("search narwhal: %v, want only the original %s", got, dupOf[false])
		}
	})

	before := map[string]generation{}
	for _, p := range []string{"/", "/stable.html", "/etag.html", "/changing.html", "/dup-a.html", "/dup-b.html"} {
		before[p] = only(p)
	}
	dd.Close()
	if t.Failed() {
		t.FailNow()
	}

	// The recrawl's crawls must start in a later Unix second than the
	// first crawl's: wait for the next second.
	time.Sleep(time.Until(time.Unix(firstEnd+1, 0)))
	site.changed.Store(true)
	cfg.Recrawl = true
	res = crawlSite(t, dir, cfg)
	if res.DeadLetters != 0 {
		t.Fatalf("recrawl: %d dead letters", res.DeadLetters)
	}
	if dd, err = OpenDataDir(ctx, dir); err != nil {
		t.Fatal(err)
	}
	defer dd.Close()
	db = dd.DB.SQL()

	t.Run("unchanged", func(t *testing.T) {
		for _, p := range []string{"/", "/stable.html", "/dup-a.html", "/dup-b.html"} {
			g := only(p)
			b := before[p]
			if g.id != b.id || g.firstSeen != b.firstSeen || g.lastSeen <= b.lastSeen || g.confirmedEnd.Valid || g.duplicate != b.duplicate {
				t.Errorf("%s: generation %+v after the recrawl, was %+v; want it open with last_seen moved on", p, g, b)
			}
		}
	})

	t.Run("changed", func(t *testing.T) {
		g := gens("/changing.html")
		if len(g) != 2 {
			t.Fatalf("/changing.html has %d generations, want 2", len(g))
		}
		old, cur := g[0], g[1]
		if old.id != before["/changing.html"].id || !old.confirmedEnd.Valid || old.confirmedEnd.Int64 != cur.firstSeen ||
			old.lastSeen > old.confirmedEnd.Int64 {
			t.Errorf("first generation %+v, want closed at the second's first_seen %d", old, cur.firstSeen)
		}
		if cur.confirmedEnd.Valid || cur.pile == old.pile || cur.firstSeen <= old.firstSeen {
			t.Errorf("second generation %+v, want open with its own text pile", cur)
		}
	})

	t.Run("not modified", func(t *testing.T) {
		site.mu.Lock()
		n304 := site.n304
		site.mu.Unlock()
		if n304 != 1 {
			t.Fatalf("/etag.html answered 304 %d times, want once", n304)
		}
		g := only("/etag.html")
		if b := before["/etag.html"]; g.id != b.id || g.confirmedEnd.Valid || g.lastSeen <= b.lastSeen {
			t.Errorf("/etag.html: generation %+v after a 304, was %+v", g, b)
		}
		rows, err := db.Query(`SELECT s.exit_code, s.crawl_type, h.status_code, h.etag FROM crawl_summary s
			JOIN http_summary h ON h.crawl_summary_id=s.crawl_summary_id
			WHERE s.entity_generation_id=? ORDER BY s.time_started_unix_utc, s.crawl_summary_id`, g.id)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		type summary struct {
			code   crawl.ExitCode
			typ    crawl.CrawlType
			status int
			etag   string
		}
		var got []summary
		for rows.Next() {
			var s summary
			if err := rows.Scan(&s.code, &s.typ, &s.status, &s.etag); err != nil {
				t.Fatal(err)
			}
			got = append(got, s)
		}
		want := []summary{{crawl.ExitComplete, crawl.CrawlFirst, 200, `"v1"`}, {crawl.ExitUnchanged, crawl.CrawlReenqueued, 304, `"v1"`}}
		if !slices.Equal(got, want) {
			t.Errorf("crawl summaries of /etag.html: %+v, want %+v", got, want)
		}
	})

	t.Run("search after recrawl", func(t *testing.T) {
		if got := search("walrus"); !slices.Equal(got, []string{u("/changing.html")}) {
			t.Errorf("search walrus: %v, want /changing.html", got)
		}
		if got := search("zebra"); len(got) != 0 {
			t.Errorf("search zebra found a closed generation: %v", got)
		}
		if got := search("okapi"); len(got) != 0 {
			t.Errorf("search okapi found the noindex page: %v", got)
		}
		if got := search("narwhal"); len(got) != 1 {
			t.Errorf("search narwhal: %v, want only the original", got)
		}
		if got := search("puffin"); !slices.Equal(got, []string{u("/etag.html")}) {
			t.Errorf("search puffin: %v, want /etag.html", got)
		}
	})
}
