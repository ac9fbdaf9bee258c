"""Port of shared/local/sqlite Search (report.go + searchquery.go + crawl/search.go)."""
import os
import re, sqlite3

STOP = set("""a an and are as at be by can do does for from how i in is it my of on or
that the this to was what when where which who why will with your""".split())
MAX_TERMS = 16
TITLE_BONUS = 1.0
PROX_BONUS = 1.0
PROX_WINDOW = 2

def az(l):
    return all('a' <= c <= 'z' for c in l)

def singulars(w):
    l = w.lower()
    if len(l) <= 3 or not az(l):
        return []
    if l.endswith("ies"):
        return [l[:-3] + "y", l[:-1]]
    if l.endswith(("sses", "xes", "ches", "shes")):
        return [l[:-2], l[:-1]]
    if l.endswith(("ss", "us", "is")) or not l.endswith("s"):
        return []
    return [l[:-1]]

def plurals(w):
    l = w.lower()
    if len(l) < 3 or not az(l) or singulars(l):
        return []
    if l.endswith("y") and l[-2] not in "aeiou":
        return [l[:-1] + "ies"]
    if l.endswith(("s", "x", "ch", "sh")):
        return [l + "es"]
    return [l + "s"]

def quote(w):
    return '"' + w.replace('"', '""') + '"'

WORD = re.compile(r"[^\W_]+")  # crawl.WordRune: letters and digits

def query_words(s):
    all_, kept, seen = [], [], set()
    for w in WORD.findall(s):
        if w.lower() in seen:
            continue
        seen.add(w.lower())
        qw = [quote(w)] + [quote(sg) for sg in singulars(w)]
        all_.append(qw)
        if w.lower() not in STOP:
            kept.append(qw)
    if not kept:
        kept = all_
    return kept[:MAX_TERMS]

def match(w): return "(" + " OR ".join(w) + ")"

def title_match(w):
    forms = list(w) + [quote(p) for p in plurals(w[0].strip('"'))]
    return "(" + " OR ".join(forms) + ")"

def near_match(a, b, window):
    return "(" + " OR ".join(f"NEAR({x} {y}, {window})" for x in a for y in b) + ")"

CONTENT = "{title description text big_headlines small_headlines code_text quote_text} : "
MATCHES = "(f.rowid IN (SELECT rowid FROM full_text_entity_index WHERE full_text_entity_index MATCH ?))"

def search_sql(words, limit, extra_terms=None, extra_w=0.0, return_pile=False):
    """The SQL of Search. extra_terms (optional): list of (quoted term, weight)
    expansion terms; each adds extra_w*weight*(bm25 over CONTENT restricted to that term)
    -- implemented separately in prf.py; here only the baseline."""
    in_title, near, all_, args = [], [], [], []
    for w in words:
        in_title.append(MATCHES)
        args.append("{title} : " + title_match(w))
        all_.extend(w)
    args += [TITLE_BONUS, float(len(words))]
    for i in range(1, len(words)):
        near.append(MATCHES)
        args.append(CONTENT + near_match(words[i-1], words[i], PROX_WINDOW))
    if not near:
        near = ["0"]
    args += [PROX_BONUS, float(max(1, len(words) - 1)), CONTENT + "(" + " OR ".join(all_) + ")", limit]
    sql = f"""SELECT u.url, coalesce(dd.title, ''), f.rowid,
        -bm25(full_text_entity_index, 0, 0, 10, 4, 1, 0.5, 5, 3, 1, 1) + ({' + '.join(in_title)}) * ? / ?
        + ({' + '.join(near)}) * ? / ? AS score
        FROM full_text_entity_index f
        CROSS JOIN entity_generation g ON g.text_pile_id=f.rowid AND g.confirmed_end_unix_utc IS NULL AND +g.marked_duplicate=0
        JOIN generation_content gc ON gc.entity_generation_id=g.entity_generation_id AND gc.noindex=0
        JOIN url u ON u.url_id=g.url_id
        LEFT JOIN document_description dd ON dd.entity_generation_id=g.entity_generation_id
        WHERE full_text_entity_index MATCH ? ORDER BY score DESC, u.url LIMIT ?"""
    return sql, args

def search(db, query, limit=10):
    words = query_words(query)
    sql, args = search_sql(words, limit)
    return [(u, t, pile, s) for u, t, pile, s in db.execute(sql, args)]

ORIGIN = re.compile(r"^https?://[^/]+/")
def rel_path(u):
    p = ORIGIN.sub("", u)
    i = min([j for j in (p.find("?"), p.find("#")) if j >= 0], default=-1)
    if i >= 0: p = p[:i]
    if p == "" or p.endswith("/"): p += "index.html"
    return p

def read_queries(fn):
    out = []
    for line in open(fn, encoding="utf-8"):
        line = line.rstrip("\n")
        if line.startswith("#") or not line.strip():
            continue
        text, rel = line.split("\t", 1)
        out.append((text, rel.split(",")))
    return out

def first_rank(got, rel):
    for i, p in enumerate(got):
        if p in rel:
            return i + 1
    return 0

def open_db(fn):
    return sqlite3.connect(f"file:{fn}?mode=ro", uri=True)

# WORK holds copies of the four trees' crawl.db files (python.db,
# sphinx.db, pg.db, flask.db) and what the scripts write; the judged
# queries are bench/eval's.
WORK = os.environ.get("PRF_WORK", ".")
EVAL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "eval")
TREES = [("python", os.path.join(WORK, "python.db"), os.path.join(EVAL, "queries.tsv")),
         ("sphinx", os.path.join(WORK, "sphinx.db"), os.path.join(EVAL, "sphinx-queries.tsv")),
         ("pg", os.path.join(WORK, "pg.db"), os.path.join(EVAL, "pg-queries.tsv")),
         ("flask", os.path.join(WORK, "flask.db"), os.path.join(EVAL, "flask-queries.tsv"))]

if __name__ == "__main__":
    import sys
    verbose = "-v" in sys.argv
    for name, dbf, qf in TREES:
        db = open_db(dbf)
        qs = read_queries(qf)
        p1 = rr = 0.0
        for text, rel in qs:
            got = [rel_path(h[0]) for h in search(db, text)]
            r = first_rank(got, rel)
            p1 += r == 1
            rr += 1 / r if r else 0
            if verbose and r != 1:
                print(f"  {name}: {text!r} rank {r or '-'} top3 {got[:3]}")
        print(f"{name:7} n={len(qs):3} P@1 {p1/len(qs):.3f} MRR@10 {rr/len(qs):.3f}")
