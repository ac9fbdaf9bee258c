"""Compound words: a query word also matches its two-word spelling
("whitespace": "white space") and two adjacent query words their one-word
spelling ("white space": "whitespace"), when the index holds them.
BENCHMARKS.md's "Compound words" (#18, not kept); the eight crawls of
make eval copied into W as rules.py's docstring says:

    PRF_WORK=W python3 bench/prf/compound.py
"""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rules as R
import search as S

def vocab(db):
    db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.v USING fts5vocab(main, full_text_entity_index, row)")
    return {t: d for t, d in db.execute("SELECT term, doc FROM temp.v")}

def words_with_compounds(q, V, split=True, join=True, mind=2):
    kept = S.query_words(q)  # list of lists of quoted forms
    raw = [w for w in q.replace("\x00", " ").split() if w.lower() not in S.STOP] or q.split()
    raw = raw[:S.MAX_TERMS]
    out = [list(f) for f in kept]
    for i, w in enumerate(raw):
        l = w.lower()
        if split and l.isalpha() and len(l) >= 6:
            best = None
            for k in range(3, len(l) - 2):
                a, b = l[:k], l[k:]
                if V.get(a, 0) >= mind and V.get(b, 0) >= mind:
                    sc = min(V[a], V[b])
                    if best is None or sc > best[0]:
                        best = (sc, a, b)
            if best:
                out[i].append('"' + best[1] + " " + best[2] + '"')
        if join and i + 1 < len(raw):
            j = (l + raw[i + 1].lower())
            if j.isalpha() and V.get(j, 0) >= mind:
                out[i].append(S.quote(j))
                out[i + 1].append(S.quote(j))
    return out

def run(tree, V, **kw):
    p1 = rr = 0.0
    for text, rel in tree.queries:
        words = words_with_compounds(text, V, **kw)
        sql, args = S.search_sql(words, 50)
        hits = [(u, t, pile, s) for u, t, pile, s in tree.db.execute(sql, args)]
        hits = sorted(hits, key=lambda h: (-(h[3] - R.penalties(tree, h[0], h[2], text)), h[0]))
        got = [S.rel_path(h[0]) for h in hits][:10]
        r = S.first_rank(got, rel)
        p1 += r == 1
        rr += 1 / r if r else 0
    n = len(tree.queries)
    return p1 / n, rr / n

trees = [R.Tree(n) for n in R.NAMES if os.path.exists(os.path.join(R.WORK, n + ".db"))]
VS = {t.name: vocab(t.db) for t in trees}
for label, kw in [("none", dict(split=False, join=False)), ("split", dict(join=False)), ("join", dict(split=False)), ("both", {}), ("both, df>=5", dict(mind=5))]:
    print(f"{label:12}", "  ".join(f"{t.name} {p1:.3f}/{mrr:.3f}" for t in trees for p1, mrr in [run(t, VS[t.name], **kw)]), flush=True)
