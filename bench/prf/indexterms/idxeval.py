"""Index-term field experiment. Score = search.py's score (bm25 main + title bonus + proximity)
computed component-wise, plus
  field variant  F(kind,w): + w * bm25(index-term field)   (separate fts5 table, all piles as rows)
  title variant  T(kind):   a query word found in the page's index terms counts as in the title
kind = anchor (anchor texts from index pages) | entry (parsed index entry incl. parent terms).
Candidates = pages matching content OR (for variants) the index-term field."""
import sys, os, sqlite3
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import search as S
EVAL = os.path.join(HERE, "..", "..", "eval")
TREES = [("python", "queries.tsv"), ("sphinx", "sphinx-queries.tsv"), ("pg", "pg-queries.tsv"), ("flask", "flask-queries.tsv")]
W = os.environ["PRF_WORK"]

class Tree:
    def __init__(s, name):
        s.db = sqlite3.connect(f"file:{W}/{name}.db?mode=ro", uri=True)
        s.db.execute(f"ATTACH 'file:{W}/terms_{name}.db?mode=ro' AS t")
        s.urls = {}
        for pile, url in s.db.execute("""SELECT g.text_pile_id, u.url FROM entity_generation g
            JOIN generation_content gc ON gc.entity_generation_id=g.entity_generation_id AND gc.noindex=0
            JOIN url u ON u.url_id=g.url_id
            WHERE g.confirmed_end_unix_utc IS NULL AND +g.marked_duplicate=0 AND g.text_pile_id IS NOT NULL"""):
            s.urls.setdefault(pile, []).append(url)
    def ids(s, table, q):
        return {r[0]: r[1] for r in s.db.execute(f"SELECT rowid, -bm25({table}) FROM {table} WHERE {table} MATCH ?", (q,))}
    def components(s, text):
        words = S.query_words(text)
        n = len(words)
        allq = S.CONTENT + "(" + " OR ".join(x for w in words for x in w) + ")"
        main = {r[0]: r[1] for r in s.db.execute(
            "SELECT rowid, -bm25(full_text_entity_index, 0, 0, 10, 4, 1, 0.5, 5, 3, 1, 1) FROM full_text_entity_index WHERE full_text_entity_index MATCH ?", (allq,))}
        title = [set(s.ids("full_text_entity_index", "{title} : " + S.title_match(w))) for w in words]
        near = [set(s.ids("full_text_entity_index", S.CONTENT + S.near_match(words[i-1], words[i], S.PROX_WINDOW))) for i in range(1, n)]
        fq = "(" + " OR ".join(x for w in words for x in w) + ")"
        extra = {}
        for kind in ("anchor", "entry"):
            f = s.ids(kind, fq)
            tw = [set(s.ids(kind, S.title_match(w))) for w in words]
            extra[kind] = (f, tw)
        return n, main, title, near, extra

def rank(tree, comp, variant):
    n, main, title, near, extra = comp
    kind, mode, w = variant
    cand = set(main)
    f, tw = extra[kind] if kind else ({}, [set()] * n)
    if kind: cand |= set(f)
    rows = []
    for p in cand:
        if p not in tree.urls: continue
        sc = main.get(p, 0.0)
        if "T" in mode:
            th = sum(1 for i in range(n) if p in title[i] or p in tw[i])
        else:
            th = sum(1 for i in range(n) if p in title[i])
        sc = sc + th * S.TITLE_BONUS / n + sum(1 for x in near if p in x) * S.PROX_BONUS / max(1, n - 1)
        if "F" in mode:
            sc += w * f.get(p, 0.0)
        for u in tree.urls[p]:
            rows.append((-sc, u))
    rows.sort()
    return [S.rel_path(u) for _, u in rows[:10]]

VARIANTS = [(None, "B", 0)] + [(k, "F", w) for k in ("anchor", "entry") for w in (0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2)] + \
           [(k, "T", 0) for k in ("anchor", "entry")] + [(k, "FT", w) for k in ("anchor", "entry") for w in (0.25, 0.5, 1)]

def vname(v):
    k, m, w = v
    return "baseline" if m == "B" else f"{k}:{m}" + (f"{w:g}" if "F" in m else "")

if __name__ == "__main__":
    verbose = "-v" in sys.argv
    res = {}   # (variant, tree) -> list of (query, rank, top1)
    for name, qf in TREES:
        tree = Tree(name)
        qs = S.read_queries(os.path.join(EVAL, qf))
        # baseline check against the original SQL
        for text, rel in qs:
            comp = tree.components(text)
            orig = [S.rel_path(h[0]) for h in S.search(tree.db, text)]
            for v in VARIANTS:
                got = rank(tree, comp, v)
                if v[1] == "B" and got != orig:
                    print("BASELINE MISMATCH", name, text, got[:3], orig[:3])
                res.setdefault((vname(v), name), []).append((text, S.first_rank(got, rel), got[0] if got else "-"))
    import json
    json.dump({f"{a}|{b}": c for (a, b), c in res.items()}, open(f"{W}/results.json", "w"), indent=0)
    print(f"{'variant':18}" + "".join(f"{t:>16}" for t, _ in TREES))
    for v in VARIANTS:
        line = f"{vname(v):18}"
        for t, _ in TREES:
            r = res[(vname(v), t)]
            p1 = sum(x[1] == 1 for x in r) / len(r); mrr = sum(1 / x[1] for x in r if x[1]) / len(r)
            line += f"     {p1:.3f}/{mrr:.3f}"
        print(line)
