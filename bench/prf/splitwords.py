"""The experiment behind BENCHMARKS.md's "The Java API's documentation"
(#18, not kept): identifiers written in camel case ("HashMap",
"parseInt", "XMLHttpRequest") also indexed as their words ("Hash Map"),
so that "hash map" finds the page titled HashMap. Each variant rebuilds
the full-text index of a copy of each tree's crawl with the words of the
identifiers appended to the columns it names, then runs the ranking of
rules.py (search.py's SQL with the two page penalties) over the new
index:

    none   the index as the crawler builds it (the baseline)
    title  the title's identifiers split
    heads  the title's and the headlines'
    all    every column's

    PRF_WORK=W python3 bench/prf/splitwords.py VARIANT [TREE ...]

W holds the trees' databases as rules.py copies them; the rebuilt copies
go to W/split-VARIANT/. Only Python's standard library is needed.
"""
import os
import re
import shutil
import sqlite3
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import search as S  # noqa: E402
import rules as R  # noqa: E402

IDENT = re.compile(r"[A-Za-z][A-Za-z0-9]*")


def parts(tok):
    """HashMap -> Hash, Map; XMLHttpRequest -> XML, Http, Request; [] for one word."""
    p = re.findall(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+", tok)
    return p if len(p) > 1 else []


def augment(s):
    if not s:
        return s
    extra = [w for m in IDENT.finditer(s) for w in parts(m.group(0))]
    return s + ("\n" + " ".join(extra) if extra else "")


COLS = ["title", "description", "text", "secondary_text", "big_headlines", "small_headlines", "code_text", "quote_text"]
VARIANTS = {"none": set(), "title": {"title"}, "heads": {"title", "big_headlines", "small_headlines"}, "all": set(COLS)}


def build(src, dst, cols):
    shutil.copy(src, dst)
    db = sqlite3.connect(dst)
    db.execute("DROP TABLE full_text_entity_index")
    db.execute("""CREATE VIRTUAL TABLE full_text_entity_index USING fts5(text_pile_id UNINDEXED, any, title, description,
        text, secondary_text, big_headlines, small_headlines, code_text, quote_text)""")
    rows = []
    for r in db.execute("SELECT text_pile_id, any, " + ", ".join(COLS) + " FROM full_text_entity_source"):
        vals = list(r)
        for i, c in enumerate(COLS):
            if c in cols:
                vals[2 + i] = augment(vals[2 + i])
        rows.append([vals[0]] + vals)
    db.executemany("INSERT INTO full_text_entity_index(rowid, text_pile_id, any, " + ", ".join(COLS) +
                   ") VALUES (?,?,?,?,?,?,?,?,?,?,?)", rows)
    db.commit()
    db.close()


if __name__ == "__main__":
    variant = sys.argv[1]
    work = os.path.join(R.WORK, "split-" + variant)
    os.makedirs(work, exist_ok=True)
    names = sys.argv[2:] or [n for n in R.NAMES if os.path.exists(os.path.join(R.WORK, n + ".db"))]
    for n in names:
        dst = os.path.join(work, n + ".db")
        if not os.path.exists(dst):
            build(os.path.join(R.WORK, n + ".db"), dst, VARIANTS[variant])
    S.WORK = R.WORK = work
    for n in names:
        p1, mrr = R.run(R.Tree(n), lambda t, h, q: -R.penalties(t, h[0], h[2], q))
        print(f"{variant:6} {n:10} P@1 {p1:.3f} MRR {mrr:.3f}", flush=True)
