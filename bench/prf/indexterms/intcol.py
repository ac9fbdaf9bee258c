"""BM25F variant: the same FTS5 index plus a column idxterms (entry text from extract.py),
added to the content column filter with bm25 weight w. w=0 shows the doc-length side effect."""
import sys, os, sqlite3, json
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import search as S
from idxeval import TREES, EVAL, W
COLS = "title, description, text, secondary_text, big_headlines, small_headlines, code_text, quote_text"
KIND = os.environ.get("KIND", "entry")

def build(name):
    fn = f"{W}/int_{KIND}_{name}.db"
    if os.path.exists(fn): return fn
    o = sqlite3.connect(fn)
    o.execute(f"ATTACH 'file:{W}/{name}.db?mode=ro' AS m"); o.execute(f"ATTACH 'file:{W}/terms_{name}.db?mode=ro' AS t")
    o.execute(f"CREATE VIRTUAL TABLE fti USING fts5(text_pile_id UNINDEXED, any, {COLS}, idxterms)")
    o.execute(f"""INSERT INTO fti(rowid, text_pile_id, any, {COLS}, idxterms)
      SELECT p.text_pile_id, p.text_pile_id, 'any', t.title, t.description, p.text, p.secondary_text, p.big_headlines,
        p.small_headlines, p.code_text, p.quote_text, coalesce(e.terms, '')
      FROM m.text_pile p JOIN m.text_pile_title t ON t.text_pile_id=p.text_pile_id LEFT JOIN t.{KIND} e ON e.rowid=p.text_pile_id""")
    o.commit(); o.close()
    return fn

def sql_for(words, w, limit=10):
    sql, args = S.search_sql(words, limit)
    sql = sql.replace("full_text_entity_index f", "x.fti f").replace("SELECT rowid FROM full_text_entity_index WHERE full_text_entity_index MATCH",
                      "SELECT rowid FROM x.fti WHERE fti MATCH").replace("WHERE full_text_entity_index MATCH", "WHERE fti MATCH")
    sql = sql.replace("-bm25(full_text_entity_index, 0, 0, 10, 4, 1, 0.5, 5, 3, 1, 1)", f"-bm25(fti, 0, 0, 10, 4, 1, 0.5, 5, 3, 1, 1, {w!r})")
    args[-2] = args[-2].replace("code_text quote_text}", "code_text quote_text idxterms}")
    return sql, args

if __name__ == "__main__":
    WS = [0, 0.1, 0.25, 0.5, 1, 2]
    res = {}
    for name, qf in TREES:
        db = sqlite3.connect(f"file:{W}/{name}.db?mode=ro", uri=True)
        db.execute(f"ATTACH 'file:{build(name)}?mode=ro' AS x")
        qs = S.read_queries(os.path.join(EVAL, qf))
        for text, rel in qs:
            words = S.query_words(text)
            b = [S.rel_path(h[0]) for h in S.search(db, text)]
            res.setdefault(f"baseline|{name}", []).append((text, S.first_rank(b, rel), b[0] if b else "-"))
            for w in WS:
                sql, args = sql_for(words, w)
                got = [S.rel_path(r[0]) for r in db.execute(sql, args)]
                res.setdefault(f"bm25f:{w:g}|{name}", []).append((text, S.first_rank(got, rel), got[0] if got else "-"))
    json.dump(res, open(f"{W}/results_int_{KIND}.json", "w"), indent=0)
    print(f"{'variant':18}" + "".join(f"{t:>16}" for t, _ in TREES))
    for v in ["baseline"] + [f"bm25f:{w:g}" for w in WS]:
        line = f"{KIND+' '+v:18}"
        for t, _ in TREES:
            r = res[f"{v}|{t}"]
            line += f"     {sum(x[1]==1 for x in r)/len(r):.3f}/{sum(1/x[1] for x in r if x[1])/len(r):.3f}"
        print(line)
