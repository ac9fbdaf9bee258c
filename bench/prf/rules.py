"""The experiments behind BENCHMARKS.md's "Source listings and changelogs"
and "The Java API's documentation" (#18): page penalties and four bonuses
tried over the trees of make eval, as a re-ranking of search.py's top 50
(search.py is the ranking before the penalties, which the Go search now
has). The Java tree (jdk) came after the first seven; a tree whose crawl
is missing is left out.

    EVAL_DATA=DIR make eval          # the eight crawls: DIR, DIR-sphinx, DIR-pg, ..., DIR-jdk
    mkdir W && python3 bench/prf/rules.py copy DIR W   # each crawl.db, WAL included, as W/<tree>.db
    eval "$(bench/inputs.sh)"; export DOC_ROOT SPHINX_DOC_ROOT PG_DOC_ROOT FLASK_DOC_ROOT \\
      DJANGO_DOC_ROOT SQLALCHEMY_DOC_ROOT GIT_DOC_ROOT JDK_DOC_ROOT   # the HTML, for the name-line variant
    PRF_WORK=W python3 bench/prf/rules.py [listing|changelog|ident|lead|name|passage|links]

Each variant prints P@1 / MRR@10 per tree, one line per setting. Only
Python's standard library is needed.
"""
import html
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import search as S  # noqa: E402

EVAL = S.EVAL
WORK = S.WORK
NAMES = ["python", "sphinx", "pg", "flask", "django", "sqlalchemy", "git", "jdk"]
QUERIES = {"python": "queries.tsv"} | {n: n + "-queries.tsv" for n in NAMES[1:]}
ROOTS = {"python": "DOC_ROOT", "sphinx": "SPHINX_DOC_ROOT", "pg": "PG_DOC_ROOT", "flask": "FLASK_DOC_ROOT",
         "django": "DJANGO_DOC_ROOT", "sqlalchemy": "SQLALCHEMY_DOC_ROOT", "git": "GIT_DOC_ROOT", "jdk": "JDK_DOC_ROOT"}

# The rules as crawl/search.go has them.
CHANGELOG = re.compile(r"(?i)\b(changelog|change log|release notes|what['’]s new)\b|^changes\s*($|[—–|:(-])")
CHANGE_WORDS = {"change", "changes", "changelog", "new", "news", "notes", "release", "releases", "version", "versions"}


def words(s):
    return re.findall(r"[a-z0-9]+", s.lower())


class Tree:
    def __init__(self, name):
        self.name = name
        self.db = S.open_db(os.path.join(WORK, name + ".db"))
        self.queries = S.read_queries(os.path.join(EVAL, QUERIES[name]))
        self.title, self.lengths, self.lead = {}, {}, {}
        for u, t in self.db.execute("""SELECT u.url, coalesce(dd.title, '') FROM entity_generation g
                JOIN url u ON u.url_id=g.url_id LEFT JOIN document_description dd ON dd.entity_generation_id=g.entity_generation_id
                WHERE g.confirmed_end_unix_utc IS NULL"""):
            self.title[u] = t
        for pile, text, code, head in self.db.execute(
                "SELECT text_pile_id, length(CAST(text AS BLOB)), length(CAST(code_text AS BLOB)), substr(text, 1, 600) FROM text_pile"):
            self.lengths[pile] = (text or 0, code or 0)
            self.lead[pile] = words(head or "")
        self.names = {}

    def name_line(self, u):
        """The one-line description of a manual page (NAME, refnamediv)."""
        if u not in self.names:
            line = ""
            root = os.environ.get(ROOTS[self.name], "")
            try:
                page = open(os.path.join(root, S.rel_path(u)), encoding="utf-8", errors="replace").read(20000)
            except OSError:
                page = ""
            for rx in (r'<h2[^>]*>NAME</h2>\s*<div class="sectionbody">\s*<p>(.*?)</p>', r'class="refnamediv"><h2>.*?</h2><p>(.*?)</p>'):
                m = re.search(rx, page, re.S)
                if m:
                    t = html.unescape(re.sub(r"<[^>]+>", "", m.group(1)))
                    parts = re.split(r"\s[-—]\s", t, maxsplit=1)
                    line = parts[-1]
                    break
            self.names[u] = set(words(line))
        return self.names[u]


def listing(tree, pile, share=0.9):
    text, code = tree.lengths.get(pile, (0, 0))
    return code > 0 and code >= share * (text + code)


def penalties(tree, url, pile, query, lp=4.0, cp=1.0, share=0.9):
    p = lp if listing(tree, pile, share) else 0.0
    if CHANGELOG.search(tree.title.get(url, "")) and not CHANGE_WORDS & set(words(query)):
        p += cp
    return p


def kept(query):
    ws = [w for w in words(query) if w not in S.STOP]
    return ws or words(query)


def share_in(query, found):
    ws = kept(query)
    hit = sum(1 for w in ws if w in found or any(x in found for x in S.singulars(w) + S.plurals(w)))
    return hit / max(1, len(ws))


IDENT = re.compile(r"[A-Za-z0-9]_[A-Za-z0-9]|[a-z][A-Z]|[A-Za-z]\.[A-Za-z]")


def run(tree, adjust):
    p1 = rr = 0.0
    for text, rel in tree.queries:
        hits = S.search(tree.db, text, 50)
        hits = sorted(hits, key=lambda h: (-(h[3] + adjust(tree, h, text)), h[0]))
        got = [S.rel_path(h[0]) for h in hits][:10]
        r = S.first_rank(got, rel)
        p1 += r == 1
        rr += 1 / r if r else 0
    return p1 / len(tree.queries), rr / len(tree.queries)


def ident_bonus(b):
    cache = {}

    def adjust(tree, h, q):
        out = -penalties(tree, h[0], h[2], q)
        ids = [w for w in q.split() if IDENT.search(w)]
        for w in ids:
            if (tree.name, w) not in cache:
                cache[(tree.name, w)] = {r[0] for r in tree.db.execute(
                    "SELECT rowid FROM full_text_entity_index WHERE full_text_entity_index MATCH ?",
                    ["{big_headlines small_headlines} : " + S.quote(w)])}
            if h[2] in cache[(tree.name, w)]:
                out += b / len(ids)
        return out
    return adjust


WORD = re.compile(r"[a-z0-9]+")


class Passages:
    """The best passage of a page for a query: the share of the query's
    words (each weighted by its idf over the text column) found together
    in some run of win consecutive blocks (lines) of the page's text."""

    def __init__(self):
        self.blocks, self.idfs, self.n = {}, {}, {}

    def page(self, tree, pile):
        k = (tree.name, pile)
        if k not in self.blocks:
            r = tree.db.execute("SELECT text FROM text_pile WHERE text_pile_id=?", (pile,)).fetchone()
            text = (r[0] or "") if r else ""
            self.blocks[k] = [set(WORD.findall(line.lower())) for line in text.split("\n") if line.strip()]
        return self.blocks[k]

    def idf(self, tree, w):
        import math
        if tree.name not in self.n:
            self.n[tree.name] = tree.db.execute("SELECT count(*) FROM text_pile").fetchone()[0]
        k = (tree.name, w)
        if k not in self.idfs:
            q = "{text} : (" + " OR ".join(S.quote(f) for f in [w] + S.singulars(w)) + ")"
            df = tree.db.execute("SELECT count(*) FROM full_text_entity_index WHERE full_text_entity_index MATCH ?", (q,)).fetchone()[0]
            n = self.n[tree.name]
            self.idfs[k] = math.log(1 + (n - df + 0.5) / (df + 0.5))
        return self.idfs[k]

    def best(self, tree, pile, query, win):
        fs = [({w} | set(S.singulars(w)), self.idf(tree, w)) for w in kept(query)]
        total = sum(i for _, i in fs) or 1
        blocks = self.page(tree, pile)
        best = 0.0
        for s in range(max(1, len(blocks) - win + 1)):
            seen = set().union(*blocks[s:s + win]) if blocks else set()
            best = max(best, sum(i for f, i in fs if f & seen))
        return best / total


PASSAGES = Passages()

# Link flags (crawl.LinkSummary.Flags) of page chrome: in_header, in_footer, in_aside, in_nav.
CHROME = (1 << 4) | (1 << 5) | (1 << 6) | (1 << 7)


class LinkShares:
    """A page's link text share: the characters of the texts of its links
    outside page chrome, over the characters of its text (a table of
    links, as javadoc's "Uses of Class" pages, comes near 1 or above)."""

    def __init__(self):
        self.trees = {}

    def share(self, tree, pile):
        if tree.name not in self.trees:
            import json
            out = {}
            for p, tl, links in tree.db.execute("""SELECT g.text_pile_id, length(tp.text), gl.links FROM entity_generation g
                    JOIN text_pile tp ON tp.text_pile_id = g.text_pile_id
                    LEFT JOIN generation_links gl ON gl.entity_generation_id = g.entity_generation_id
                    WHERE g.confirmed_end_unix_utc IS NULL"""):
                lt = sum(len(l[6] or "") for l in json.loads(links or "[]") if len(l) > 6 and not (l[1] or 0) & CHROME)
                out[p] = lt / max(1, tl or 0)
            self.trees[tree.name] = out
        return self.trees[tree.name].get(pile, 0.0)


LINKS = LinkShares()

VARIANTS = {
    "listing": [(f"listing share {s} penalty {p}", lambda t, h, q, s=s, p=p: -penalties(t, h[0], h[2], q, lp=p, cp=0, share=s))
                for s in (0.8, 0.9, 0.95) for p in (0, 1, 2, 4, 100)],
    "changelog": [(f"listing 4, changelog {p}", lambda t, h, q, p=p: -penalties(t, h[0], h[2], q, cp=p)) for p in (0, 1, 2, 4)],
    "ident": [(f"identifier in a headline {b}", ident_bonus(b)) for b in (0, 1, 2, 4)],
    "lead": [(f"first {n} words {b}", lambda t, h, q, b=b, n=n: -penalties(t, h[0], h[2], q) + b * share_in(q, set(t.lead.get(h[2], [])[:n])))
             for b, n in ((0, 0), (0.5, 20), (1, 20), (0.5, 40), (1, 40), (2, 40))],
    "name": [(f"manual page's name line {b}", lambda t, h, q, b=b: -penalties(t, h[0], h[2], q) + (b * share_in(q, t.name_line(h[0])) if t.name_line(h[0]) else 0))
             for b in (0, 0.5, 1, 2)],
    "passage": [(f"best passage of {w} blocks {b}", lambda t, h, q, b=b, w=w: -penalties(t, h[0], h[2], q) + (b * PASSAGES.best(t, h[2], q, w) if b else 0))
                for w in (1, 3, 8) for b in (0, 1, 2, 4)],
    "links": [(f"link text share {x} penalty {p}", lambda t, h, q, x=x, p=p: -penalties(t, h[0], h[2], q) - (p if p and LINKS.share(t, h[2]) >= x else 0))
              for x, p in [(0, 0)] + [(x, p) for x in (0.3, 0.5, 0.7) for p in (0.5, 1, 2, 4)]],
}

def copy(data, work):
    """Copies the seven crawls of EVAL_DATA=data make eval into work."""
    import sqlite3
    for n in NAMES:
        fn = f"{data}{'' if n == 'python' else '-' + n}/crawl.db"
        if not os.path.exists(fn):
            print(f"no {fn}: {n} left out", file=sys.stderr)
            continue
        src = sqlite3.connect(f"file:{fn}?mode=ro", uri=True)
        dst = sqlite3.connect(os.path.join(work, n + ".db"))
        src.backup(dst)
        dst.close()
        src.close()


if __name__ == "__main__":
    if sys.argv[1:2] == ["copy"]:
        copy(sys.argv[2], sys.argv[3])
        sys.exit(0)
    trees = [Tree(n) for n in NAMES if os.path.exists(os.path.join(WORK, n + ".db"))]
    for v in sys.argv[1:] or list(VARIANTS):
        for label, adjust in VARIANTS[v]:
            print(f"{label:32}", "  ".join(f"{t.name} {p1:.3f}/{mrr:.3f}" for t in trees for p1, mrr in [run(t, adjust)]), flush=True)
