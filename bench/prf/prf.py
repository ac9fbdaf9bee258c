"""Pseudo-relevance feedback over the ported Search (search.py).

score'(d) = score(d) + w * sum_t rw_t * bm25_t(d)
score(d): Search's own score (bm25 + title bonus + proximity bonus), 0 for a page
          the original query does not match.
bm25_t(d): -bm25() of FTS5 with Search's column weights for the single term t over
          the content columns (chrome excluded), i.e. t's own contribution to an
          OR-query's bm25.
Terms t: the m best by sel(t) over the top k pages of the original ranking, leaving out
the query's words (and their singular/plural forms), stop words, tokens < 3 chars and
numbers.
  mode 'tfidf': sel(t) = sum_{d in top k} wtf(t,d)/len(d) * idf(t), rw_t = 1
  mode 'rm3'  : sel(t) = sum_{d in top k} wtf(t,d)/len(d) * softmax(score)(d)   (RM1),
                rw_t = sel(t)/max sel  (no idf; RM3's usual weighting)
wtf: tf with the column weights of the bm25 call (title 10, description 4, text 1,
big headlines 5, small headlines 3, code 1, quote 1).
"""
import math, os, pickle, re, sys, itertools
from collections import Counter, defaultdict
import search as S

COLS = [("title", 10), ("description", 4), ("text", 1), ("big_headlines", 5),
        ("small_headlines", 3), ("code_text", 1), ("quote_text", 1)]
TOK = re.compile(r"[^\W_]+")
# Lucene/SMART-style English stop words (plus the crawler's own list)
STOP = set("""a about above after again against all am an and any are aren as at be because been
before being below between both but by can cannot could did didn do does doesn doing don down
during each few for from further had has have having he her here hers herself him himself his how
i if in into is isn it its itself just let me more most my myself no nor not now of off on once
only or other ought our ours ourselves out over own same she should so some such than that the
their theirs them themselves then there these they this those through to too under until up very
was we were what when where which while who whom why will with would you your yours yourself
yourselves also may might must shall use used using one two see e g via etc""".split()) | S.STOP

def tokens(s):
    return TOK.findall(s.lower())

class Tree:
    def __init__(self, name, dbf):
        self.name = name
        self.db = S.open_db(dbf)
        cache = os.path.join(S.WORK, f"cache-{name}.pkl")
        if os.path.exists(cache):
            self.docs, self.df, self.N = pickle.load(open(cache, "rb"))
        else:
            self.build(cache)
        self.term_cache = {}
        self.orig_cache = {}

    def build(self, cache):
        # the pages Search can return (open, not duplicate, indexed)
        rows = self.db.execute("""SELECT DISTINCT s.text_pile_id, """ + ", ".join("s." + c for c, _ in COLS) + """
            FROM full_text_entity_source s
            JOIN entity_generation g ON g.text_pile_id=s.text_pile_id AND g.confirmed_end_unix_utc IS NULL AND g.marked_duplicate=0
            JOIN generation_content gc ON gc.entity_generation_id=g.entity_generation_id AND gc.noindex=0""")
        self.docs, df = {}, Counter()
        for r in rows:
            tf, ln = Counter(), 0
            for (c, wt), txt in zip(COLS, r[1:]):
                ts = tokens(txt or "")
                ln += wt * len(ts)
                for t in ts:
                    tf[t] += wt
            self.docs[r[0]] = (tf, max(ln, 1))
            df.update(tf.keys())
        self.df, self.N = dict(df), len(self.docs)
        pickle.dump((self.docs, self.df, self.N), open(cache, "wb"))

    def idf(self, t):
        return math.log(self.N / self.df.get(t, self.N))

    def orig(self, q):
        """[(url, pile, score)] of every page the query matches, Search's order."""
        if q not in self.orig_cache:
            sql, args = S.search_sql(S.query_words(q), -1)
            self.orig_cache[q] = [(u, p, s) for u, _, p, s in self.db.execute(sql, args)]
        return self.orig_cache[q]

    def term_bm25(self, t):
        if t not in self.term_cache:
            self.term_cache[t] = dict(self.db.execute(
                "SELECT rowid, -bm25(full_text_entity_index, 0, 0, 10, 4, 1, 0.5, 5, 3, 1, 1) FROM full_text_entity_index WHERE full_text_entity_index MATCH ?",
                (S.CONTENT + S.quote(t),)))
        return self.term_cache[t]

    def url_of(self):
        if not hasattr(self, "_urls"):
            self._urls = defaultdict(list)
            for u, p in self.db.execute("""SELECT u.url, g.text_pile_id FROM entity_generation g
                JOIN generation_content gc ON gc.entity_generation_id=g.entity_generation_id AND gc.noindex=0
                JOIN url u ON u.url_id=g.url_id WHERE g.confirmed_end_unix_utc IS NULL AND g.marked_duplicate=0"""):
                self._urls[p].append(u)
        return self._urls

    def expansion(self, q, k, m, mode):
        ranked = self.orig(q)
        excl = set()
        for w in q.lower().split():
            for x in [w] + S.singulars(w) + S.plurals(w):
                excl.update(tokens(x))
        top, seen = [], set()
        for u, p, s in ranked:          # top k distinct pages
            if p not in seen:
                seen.add(p); top.append((p, s))
            if len(top) == k:
                break
        if not top:
            return []
        mx = max(s for _, s in top)
        dw = {p: math.exp(s - mx) for p, s in top}
        z = sum(dw.values())
        sel = Counter()
        for p, _ in top:
            tf, ln = self.docs.get(p, (Counter(), 1))
            for t, c in tf.items():
                if t in excl or t in STOP or len(t) < 3 or t.isdigit():
                    continue
                if mode == "tfidf":
                    sel[t] += c / ln * self.idf(t)
                else:
                    sel[t] += c / ln * dw[p] / z
        best = sel.most_common(m)
        if not best:
            return []
        if mode == "tfidf":
            return [(t, 1.0) for t, _ in best]
        return [(t, v / best[0][1]) for t, v in best]

    def rank(self, q, k=0, m=0, w=0.0, mode="tfidf", limit=10, interp=False):
        ranked = self.orig(q)
        if k == 0 or w == 0:
            return [u for u, _, _ in ranked[:limit]], []
        exp = self.expansion(q, k, m, mode)
        score = defaultdict(float)
        for u, p, s in ranked:
            score[(u, p)] = s
        urls = self.url_of()
        if interp:  # (1-w)*orig/max(orig) + w*exp/max(exp), both over all candidates
            es = defaultdict(float)
            for t, rw in exp:
                for p, b in self.term_bm25(t).items():
                    es[p] += rw * b
            mo = max(score.values(), default=1) or 1
            me = max(es.values(), default=1) or 1
            for key in score:
                score[key] *= (1 - w) / mo
            for p, e in es.items():
                for u in urls.get(p, ()):
                    score[(u, p)] += w * e / me
        else:
            for t, rw in exp:
                for p, b in self.term_bm25(t).items():
                    for u in urls.get(p, ()):
                        score[(u, p)] += w * rw * b
        out = sorted(score.items(), key=lambda x: (-x[1], x[0][0]))
        return [u for (u, _), _ in out[:limit]], exp

def evaluate(tree, qs, **kw):
    ranks = []
    for text, rel in qs:
        got, _ = tree.rank(text, **kw)
        ranks.append(S.first_rank([S.rel_path(u) for u in got], rel))
    n = len(ranks)
    return sum(r == 1 for r in ranks) / n, sum(1 / r for r in ranks if r) / n, ranks

if __name__ == "__main__":
    trees = [(Tree(n, d), S.read_queries(q)) for n, d, q in S.TREES]
    base = {t.name: evaluate(t, qs) for t, qs in trees}
    print("setting".ljust(26) + "".join(f"{t.name:>14}" for t, _ in trees) + "  qualifies")
    print("baseline".ljust(26) + "".join(f"  {base[t.name][0]:.3f}/{base[t.name][1]:.3f}" for t, _ in trees))
    results = []
    modes = sys.argv[1:] or ["tfidf", "rm3"]
    for mode, k, m, w in itertools.product(modes, [3, 5, 10], [5, 10, 20], [0.1, 0.2, 0.3, 0.5]):
        res = {t.name: evaluate(t, qs, k=k, m=m, w=w, mode=mode) for t, qs in trees}
        worse = any(res[n][0] < base[n][0] - 1e-9 for n in res)
        better = any(res[n][0] > base[n][0] + 1e-9 for n in res)
        ok = not worse and better
        results.append(((mode, k, m, w), res, ok))
        print(f"{mode} k={k:<2} m={m:<2} w={w:<4}".ljust(26) + "".join(f"  {res[t.name][0]:.3f}/{res[t.name][1]:.3f}" for t, _ in trees) + ("  YES" if ok else ""), flush=True)
    pickle.dump((base, results), open(os.path.join(S.WORK, "results-" + "-".join(modes) + ".pkl"), "wb"))
