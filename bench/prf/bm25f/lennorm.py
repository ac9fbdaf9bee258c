"""Length normalization (#18): FTS5's bm25 (k1 1.2, b 0.75, each column's
weighted term frequency normalized by the whole row's length) against
plain BM25 with other k1 and b, and BM25F (each column normalized by its
own length), as a re-ranking of every row the search's MATCH finds.

The score of a row is Search's, with the bm25 part replaced:

    m * BM25 + title bonus + proximity bonus - listing penalty - changelog penalty

the bonuses and penalties as crawl/search.go and sqlite/report.go have
them (penalties over every row, as the Go SQL does, not over a top 50 as
rules.py does), the same MATCH (every quoted form of every query word,
each its own phrase with its own idf, FTS5's log((N - n + 0.5)/(n + 0.5))
floored at 1e-6, n counted under the column filter), and m a multiplier
(0.5, 1, 2, or "auto": the ratio, over all queries of all trees, of the
mean best bm25 part of FTS5's to the variant's). Per-row, per-column term
counts come from fts5vocab (instance), column lengths from the
full_text_entity_index_docsize shadow table, N and the column totals from
the averages record (rowid 1 of full_text_entity_index_data).

Variants (the column weights are the Go search's: title 10, description
4, text 1, big headlines 5, small headlines 3, code 1, quote 1):
  fts     k1, b: BM25 over the weighted frequencies, whole-row length (FTS5's
          own formula; k1 1.2, b 0.75, m 1 is the baseline and must give it)
  content k1, b: the same with the row's length counted over the searched
          columns only (secondary_text, a page's navigation, left out)
  bm25f   k1, b: tf~ = sum_c w_c tf_c / (1 - b_c + b_c len_c / avglen_c),
          score idf * tf~ (k1 + 1) / (tf~ + k1); b_c one value for every
          column, or "short" (0.3 for title, description and headlines,
          0.75 for text, code and quotes)

    mkdir -p W && python3 bench/prf/rules.py copy DIR W     # the eight crawls as W/<tree>.db
    PRF_WORK=W python3 bench/prf/bm25f/lennorm.py check     # reproduction: SQL search + rules vs the port
    PRF_WORK=W python3 bench/prf/bm25f/lennorm.py grid      # every setting, P@1 / MRR@10 per tree (~35 s)
    PRF_WORK=W GRID_KINDS=fts,content GRID_K1=2,2.5,3,4 GRID_B=0.5,0.75 GRID_M=0.35,0.5,0.75,auto \
      python3 bench/prf/bm25f/lennorm.py grid               # a grid of one's own (GRID_BF: bm25f's b)
    python3 bench/prf/bm25f/lennorm.py summary GRIDOUT...    # settings ranked by queries at rank 1 gained (first line: baseline)
    PRF_WORK=W python3 bench/prf/bm25f/lennorm.py moves 'bm25f k1=1.2 b=0.75 m=1'   # per-query moves

TREES=python,jdk (say) limits a run to some trees. The databases are
opened read-only (the fts5vocab table is a temp one); nothing is written
into W. results.txt beside this script has the runs of 2026-11-30.
Only Python's standard library is needed (its sqlite3 must have FTS5).
"""
import heapq
import math
import os
import sys
import time
import unicodedata

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import search as S  # noqa: E402
import rules as R  # noqa: E402

# Column order of full_text_entity_index and Search's bm25 weights.
COLS = ["text_pile_id", "any", "title", "description", "text", "secondary_text",
        "big_headlines", "small_headlines", "code_text", "quote_text"]
WEIGHTS = [0, 0, 10, 4, 1, 0.5, 5, 3, 1, 1]
SEARCHED = [2, 3, 4, 6, 7, 8, 9]  # Search's column filter (secondary_text and any left out)
SHORT = {2, 3, 6, 7}             # title, description, headlines
K1S = (0.6, 0.9, 1.2, 1.6, 2.0)
BS = (0.2, 0.35, 0.5, 0.75)
MULTS = (0.5, 1.0, 2.0, "auto")


def varints(blob):
    """SQLite's varints (FTS5's sqlite3Fts5GetVarint), all of them."""
    out, i = [], 0
    while i < len(blob):
        v = 0
        for j in range(9):
            c = blob[i]
            i += 1
            if j == 8:
                v = (v << 8) | c
                break
            v = (v << 7) | (c & 0x7f)
            if not c & 0x80:
                break
        out.append(v)
    return out


def index_term(form):
    """The token unicode61 (remove_diacritics 1) makes of a query form."""
    f = form.lower()
    if f.isascii():
        return f
    return "".join(c for c in unicodedata.normalize("NFKD", f) if not unicodedata.combining(c))


class Tree:
    def __init__(self, name):
        self.name = name
        self.rt = R.Tree(name)  # titles, byte lengths, queries, the SQL connection
        db = self.db = self.rt.db
        db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.v USING fts5vocab(main, full_text_entity_index, instance)")
        avg = varints(db.execute("SELECT block FROM full_text_entity_index_data WHERE id=1").fetchone()[0])
        self.n = avg[0]
        self.totals = avg[1:] + [0] * (len(COLS) - len(avg[1:]))
        self.avgdl = sum(self.totals) / self.n
        self.avgc = [t / self.n for t in self.totals]
        self.avgcontent = sum(self.totals[c] for c in SEARCHED) / self.n
        self.sizes = {}
        for rid, sz in db.execute("SELECT id, sz FROM full_text_entity_index_docsize"):
            v = varints(sz)
            self.sizes[rid] = v + [0] * (len(COLS) - len(v))
        # The rows Search may return: open, non-duplicate, indexable generations.
        self.urls = {}
        for pile, url in db.execute("""SELECT g.text_pile_id, u.url FROM entity_generation g
                JOIN generation_content gc ON gc.entity_generation_id=g.entity_generation_id AND gc.noindex=0
                JOIN url u ON u.url_id=g.url_id
                WHERE g.confirmed_end_unix_utc IS NULL AND g.marked_duplicate=0"""):
            self.urls.setdefault(pile, []).append(url)
        self.postings = {}
        self.sets = {}

    def counts(self, term):
        """{row: {column: count}} of term over the searched columns."""
        if term not in self.postings:
            out = {}
            for doc, col, cnt in self.db.execute("SELECT doc, col, count(*) FROM temp.v WHERE term=? GROUP BY doc, col", (term,)):
                c = COLS.index(col)
                if c in SEARCHED:
                    out.setdefault(doc, {})[c] = cnt
            self.postings[term] = out
        return self.postings[term]

    def rowids(self, match):
        if match not in self.sets:
            self.sets[match] = {r[0] for r in self.db.execute(
                "SELECT rowid FROM full_text_entity_index WHERE full_text_entity_index MATCH ?", (match,))}
        return self.sets[match]


class Query:
    """One query over one tree: every matching row with what scoring needs."""

    def __init__(self, tree, text, rel):
        self.text, self.rel = text, rel
        words = S.query_words(text)
        phrases = [p for w in words for p in w]
        self.idf, post = [], []
        for p in phrases:
            form = p[1:-1].replace('""', '"')
            cs = tree.counts(index_term(form))
            nhit = len(cs)
            idf = math.log((tree.n - nhit + 0.5) / (nhit + 0.5))
            self.idf.append(idf if idf > 0 else 1e-6)
            post.append(cs)
        rows = set().union(*[set(cs) for cs in post]) & set(tree.urls)
        # Bonuses, as Search's subqueries have them.
        bonus = dict.fromkeys(rows, 0.0)
        title = [tree.rowids("{title} : " + S.title_match(w)) for w in words]
        near = [tree.rowids(S.CONTENT + S.near_match(words[i - 1], words[i], S.PROX_WINDOW)) for i in range(1, len(words))]
        for r in rows:
            bonus[r] = sum(r in t for t in title) * S.TITLE_BONUS / len(words) + \
                sum(r in t for t in near) * S.PROX_BONUS / max(1, len(words) - 1)
        self.rows = []  # (row, [(phrase, {col: count})], sizes, bonus, [(url, penalty)])
        for r in sorted(rows):
            tfs = [(i, cs[r]) for i, cs in enumerate(post) if r in cs]
            pens = [(u, R.penalties(tree.rt, u, r, text)) for u in tree.urls[r]]
            self.rows.append((r, tfs, tree.sizes[r], bonus[r], pens))


def scorer(tree, kind, k1, b):
    """A function of a Query's row giving the bm25 part of its score."""
    if kind in ("fts", "content"):
        avg = tree.avgdl if kind == "fts" else tree.avgcontent

        def f(q, row):
            _, tfs, sz, _, _ = row
            d = sum(sz) if kind == "fts" else sum(sz[c] for c in SEARCHED)
            norm = k1 * (1 - b + b * d / avg)
            s = 0.0
            for i, cs in tfs:
                tf = 0.0
                for c, n in cs.items():
                    tf += WEIGHTS[c] * n
                s += q.idf[i] * (tf * (k1 + 1.0)) / (tf + norm)
            return s
        return f
    bc = [(0.3 if c in SHORT else 0.75) if b == "short" else b for c in range(len(COLS))]

    def f(q, row):
        _, tfs, sz, _, _ = row
        s = 0.0
        for i, cs in tfs:
            tf = 0.0
            for c, n in cs.items():
                tf += WEIGHTS[c] * n / (1 - bc[c] + bc[c] * sz[c] / tree.avgc[c])
            s += q.idf[i] * tf * (k1 + 1.0) / (tf + k1)
        return s
    return f


def env_list(name, default):
    """A comma-separated override of a grid's values (GRID_K1, GRID_B, GRID_BF, GRID_M, GRID_KINDS)."""
    v = os.environ.get(name)
    if not v:
        return default
    return tuple(x if x in ("auto", "short", "fts", "content", "bm25f") else float(x) for x in v.split(","))


def settings():
    k1s, bs, bfs = env_list("GRID_K1", K1S), env_list("GRID_B", BS), env_list("GRID_BF", (0.5, 0.75, "short"))
    kinds = env_list("GRID_KINDS", ("fts", "content", "bm25f"))
    out = []
    for kind in kinds:
        out += [(kind, k1, b) for k1 in k1s for b in (bfs if kind == "bm25f" else bs)]
    return out


def label(kind, k1, b, m):
    return f"{kind} k1={k1} b={b} m={m if m == 'auto' else '%g' % m}"


def rank(q, parts, m):
    """Rank (1-10, 0 = not in the top 10) of the first relevant page, and the top 10."""
    hits = []
    for row, s in zip(q.rows, parts):
        for u, pen in row[4]:
            hits.append((m * s + row[3] - pen, u))
    got = [S.rel_path(u) for _, u in heapq.nsmallest(10, hits, key=lambda h: (-h[0], h[1]))]
    return S.first_rank(got, q.rel), got


def load(names=None):
    trees, qs = [], {}
    for n in names or R.NAMES:
        if not os.path.exists(os.path.join(S.WORK, n + ".db")):
            continue
        t0 = time.time()
        t = Tree(n)
        qs[n] = [Query(t, text, rel) for text, rel in t.rt.queries]
        print(f"# {n}: {len(qs[n])} queries, {sum(len(q.rows) for q in qs[n])} rows scored, "
              f"N {t.n}, avgdl {t.avgdl:.0f}, {time.time() - t0:.1f} s", file=sys.stderr, flush=True)
        trees.append(t)
    return trees, qs


def evaluate(trees, qs, kind, k1, b, mults=MULTS, basetop=None):
    """{m: {tree: [rank per query]}}, the mean best bm25 part over all
    queries, and the auto multiplier (basetop over it)."""
    parts, tops = {}, []
    for t in trees:
        f = scorer(t, kind, k1, b)
        parts[t.name] = [[f(q, row) for row in q.rows] for q in qs[t.name]]
        tops += [max(p, default=0.0) for p in parts[t.name]]
    top = sum(tops) / max(1, len(tops))
    ratio = basetop / top if basetop and top else 1.0
    out = {m: {} for m in mults}
    for m in mults:
        mm = ratio if m == "auto" else float(m)
        for t in trees:
            out[m][t.name] = [rank(q, p, mm)[0] for q, p in zip(qs[t.name], parts[t.name])]
    return out, top, ratio


def summary(ranks):
    n = len(ranks)
    return sum(r == 1 for r in ranks) / n, sum(1 / r for r in ranks if r) / n


def line(lab, res, trees):
    hits = sum(sum(r == 1 for r in res[t.name]) for t in trees)
    return f"{lab:34} " + "  ".join(f"{t.name} {'%.3f/%.3f' % summary(res[t.name])}" for t in trees) + f"  | at 1: {hits}"


def check(trees, qs):
    """The SQL search with rules.py's re-ranking against the port at FTS5's settings."""
    for t in trees:
        p1 = rr = 0.0
        maxdiff, compared = 0.0, 0
        f = scorer(t, "fts", 1.2, 0.75)
        same = 0
        for q in qs[t.name]:
            sql, args = S.search_sql(S.query_words(q.text), 50)
            sql = sql.replace("AS score", "AS score, -bm25(full_text_entity_index, 0, 0, 10, 4, 1, 0.5, 5, 3, 1, 1)")
            hits = list(t.db.execute(sql, args))
            byrow = {row[0]: f(q, row) for row in q.rows}
            for h in hits:
                maxdiff = max(maxdiff, abs(byrow[h[2]] - h[4]))
                compared += 1
            adj = sorted(hits, key=lambda h: (-(h[3] - R.penalties(t.rt, h[0], h[2], q.text)), h[0]))
            got = [S.rel_path(h[0]) for h in adj][:10]
            r = S.first_rank(got, q.rel)
            p1 += r == 1
            rr += 1 / r if r else 0
            r2, got2 = rank(q, [byrow[row[0]] for row in q.rows], 1.0)
            same += got2 == got
        n = len(qs[t.name])
        port = summary(evaluate([t], qs, "fts", 1.2, 0.75, mults=(1.0,))[0][1.0][t.name])
        print(f"{t.name:10} SQL+rules P@1 {p1 / n:.3f} MRR@10 {rr / n:.3f} | port {port[0]:.3f}/{port[1]:.3f} | "
              f"same top 10 {same}/{n} | bm25 max |diff| {maxdiff:.2e} over {compared} rows", flush=True)


def grid(trees, qs):
    base, basetop, _ = evaluate(trees, qs, "fts", 1.2, 0.75, mults=(1.0,))
    print(line("baseline (fts k1=1.2 b=0.75 m=1)", base[1.0], trees), flush=True)
    mults = env_list("GRID_M", MULTS)
    for kind, k1, b in settings():
        res, _, ratio = evaluate(trees, qs, kind, k1, b, mults=mults, basetop=basetop)
        for m in mults:
            lab = label(kind, k1, b, m) + (f"({ratio:.2f})" if m == "auto" else "")
            print(line(lab, res[m], trees), flush=True)


def summarize(files, top=15):
    """From grid outputs: each setting's queries at rank 1 gained or lost per tree
    against the baseline line, best first (total, then MRR@10 summed over queries)."""
    import re
    rows, seen = [], set()
    for fn in files:
        for ln in open(fn):
            vals = re.findall(r"(\w+) ([\d.]+)/([\d.]+)", ln[34:])
            if vals and ln[:34].strip() not in seen and not (rows and ln.startswith("baseline")):
                seen.add(ln[:34].strip())
                rows.append((ln[:34].strip(), {n: (float(p), float(m)) for n, p, m in vals}))
    counts = {n: len(S.read_queries(os.path.join(R.EVAL, R.QUERIES[n]))) for n in rows[0][1]}
    base = rows[0][1]
    out = []
    for lab, d in rows[1:]:
        dl = {n: round((d[n][0] - base[n][0]) * counts[n]) for n in counts}
        mrr = sum((d[n][1] - base[n][1]) * counts[n] for n in counts)
        out.append((sum(dl.values()), mrr, min(dl.values()), lab, dl))
    out.sort(key=lambda o: (-o[0], -o[1]))

    def show(o):
        print(f"{o[0]:+3d} at 1, MRR sum {o[1]:+6.2f}, worst tree {o[2]:+d}  {o[3]:34} " + " ".join(f"{n}{o[4][n]:+d}" for n in counts))
    print(f"best {top} by queries at rank 1 (of {sum(counts.values())}; baseline {rows[0][0]}):")
    for o in out[:top]:
        show(o)
    print(f"best {top} with no tree losing more than one query at rank 1:")
    for o in [o for o in out if o[2] >= -1][:top]:
        show(o)
    for kind in ("fts", "content", "bm25f"):
        print(f"best 3 {kind}:")
        for o in [o for o in out if o[3].startswith(kind + " ")][:3]:
            show(o)


def parse(lab):
    kv = dict(x.split("=") for x in lab.split()[1:])
    b = kv["b"] if kv["b"] == "short" else float(kv["b"])
    m = kv.get("m", "1")
    return lab.split()[0], float(kv["k1"]), b, m if m == "auto" else float(m)


def moves(trees, qs, lab):
    kind, k1, b, m = parse(lab)
    base, basetop, _ = evaluate(trees, qs, "fts", 1.2, 0.75, mults=(1.0,))
    new, _, ratio = evaluate(trees, qs, kind, k1, b, mults=(m,), basetop=basetop)
    mm = ratio if m == "auto" else float(m)
    print(line("baseline", base[1.0], trees))
    print(line(f"{kind} k1={k1} b={b} m={mm:.3g}", new[m], trees))
    for t in trees:
        f = scorer(t, kind, k1, b)
        for q, rb, rn in zip(qs[t.name], base[1.0][t.name], new[m][t.name]):
            if rb != rn:
                arrow = "up" if rn and (not rb or rn < rb) else "down"
                top = rank(q, [f(q, row) for row in q.rows], mm)[1][:1]
                print(f"  {t.name:10} {arrow:4} {rb or '-'} -> {rn or '-'}  {q.text!r}  (now first: {top[0] if top else '-'}; relevant {q.rel[0]})")


if __name__ == "__main__":
    cmd = sys.argv[1] if len(sys.argv) > 1 else "grid"
    names = os.environ.get("TREES", "").split(",") if os.environ.get("TREES") else None
    if cmd == "summary":
        summarize(sys.argv[2:])
        sys.exit(0)
    trees, qs = load(names)
    if cmd == "check":
        check(trees, qs)
    elif cmd == "grid":
        grid(trees, qs)
    elif cmd == "moves":
        moves(trees, qs, sys.argv[2])
    else:
        sys.exit(__doc__)
