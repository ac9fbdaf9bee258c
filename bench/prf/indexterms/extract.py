"""Build per-page index-term text from back-of-book index pages.
Index-page rule (generic): last URL path segment starts with 'genindex' or equals
'bookindex.html', or the page title is 'Index' or starts with 'Index ' followed by a
separator (—, –, -, |, :).
Two texts per target page (text_pile_id):
  anchor : anchor texts of links from index pages (generation_links), deduped on
           (target url, fragment, text)
  entry  : parsed from the stored HTML: the link's own list item (li/dt) text,
           i.e. its non-link text + this link's text, plus each enclosing entry's
           term (parent li's own text; for a dd, the preceding dt's text), deduped.
Writes terms_<tree>.db with tables anchor(rowid,terms) and entry(rowid,terms) as fts5."""
import sqlite3, json, re, os, sys
from html.parser import HTMLParser
from urllib.parse import urljoin, urldefrag
from warc import body

W = os.environ["PRF_WORK"]
ROOTS = {t: os.environ["IDX_" + t.upper()] for t in ("python", "sphinx", "pg", "flask")}  # each tree's crawl directory (EVAL_DATA)
TITLE_RE = re.compile(r"^index(\s*$|\s+[—–\-|:])", re.I)

def is_index(url, title):
    seg = urldefrag(url)[0].split("?")[0].rstrip("/").rsplit("/", 1)[-1]
    return seg.startswith("genindex") or seg == "bookindex.html" or bool(TITLE_RE.match(title.strip()))

class Node:
    __slots__ = ("tag", "attrs", "kids", "parent")
    def __init__(s, tag, attrs, parent):
        s.tag, s.attrs, s.kids, s.parent = tag, dict(attrs), [], parent
VOID = {"br", "img", "hr", "meta", "link", "input", "wbr", "col", "area", "base", "source"}
class DOM(HTMLParser):
    def __init__(s):
        super().__init__(convert_charrefs=True); s.root = Node("#root", [], None); s.cur = s.root
    def handle_starttag(s, tag, attrs):
        n = Node(tag, attrs, s.cur); s.cur.kids.append(n)
        if tag not in VOID: s.cur = n
    def handle_endtag(s, tag):
        c = s.cur
        while c is not None and c.tag != tag: c = c.parent
        if c is not None and c.parent is not None: s.cur = c.parent
    def handle_data(s, d): s.cur.kids.append(d)

LISTS = {"ul", "ol", "dl", "dd"}
def own_text(n, skip_a=True, keep=None):
    """text of n excluding nested lists; links skipped unless they are `keep`."""
    out = []
    def walk(x):
        for k in x.kids:
            if isinstance(k, str): out.append(k)
            elif k.tag in LISTS: continue
            elif k.tag == "a" and skip_a and k is not keep: continue
            else: walk(k)
    walk(n)
    return re.sub(r"\s+", " ", "".join(out)).strip(" ,")

def item_term(n):
    t = own_text(n)
    return t if re.search(r"\w", t) else own_text(n, skip_a=False)

def prev_dt(dd):
    sib = dd.parent.kids
    i = sib.index(dd)
    for k in reversed(sib[:i]):
        if isinstance(k, Node) and k.tag == "dt": return k
    return None

def entries(html, base):
    p = DOM(); p.feed(html)
    out = []
    stack = [p.root]
    while stack:
        n = stack.pop()
        for k in n.kids:
            if isinstance(k, Node):
                stack.append(k)
                if k.tag == "a" and k.attrs.get("href"):
                    out.append((urljoin(base, k.attrs["href"]), entry_text(k)))
    return out

def entry_text(a):
    parts, x, inner = [], a.parent, None
    while x is not None:
        if x.tag in ("li", "dt") and inner is None:
            inner = x; parts.append(own_text(x, keep=a))
        elif x.tag == "li":
            parts.append(item_term(x))
        elif x.tag == "dd":
            dt = prev_dt(x)
            if dt is not None: parts.append(item_term(dt))
        x = x.parent
    if inner is None: parts.append(own_text(a, skip_a=False))
    return " ".join(reversed([p for p in parts if p]))

def build(tree, verbose=False):
    db = sqlite3.connect(f"file:{W}/{tree}.db?mode=ro", uri=True)
    gens = db.execute("""SELECT g.entity_generation_id, u.url, coalesce(dd.title,''), g.text_pile_id, gc.body_key, gl.links
      FROM entity_generation g JOIN url u ON u.url_id=g.url_id
      JOIN generation_content gc ON gc.entity_generation_id=g.entity_generation_id AND gc.noindex=0
      LEFT JOIN document_description dd ON dd.entity_generation_id=g.entity_generation_id
      LEFT JOIN generation_links gl ON gl.entity_generation_id=g.entity_generation_id
      WHERE g.confirmed_end_unix_utc IS NULL AND g.marked_duplicate=0""").fetchall()
    url_pile = {}
    for _, url, _, pile, _, _ in gens:
        if pile is not None: url_pile.setdefault(urldefrag(url)[0], pile)
    urlid = dict(db.execute("SELECT url, url_id FROM url"))
    idurl = {v: k for k, v in urlid.items()}
    idx = [g for g in gens if is_index(g[1], g[2])]
    anchor, entry = {}, {}
    seen_a, seen_e = set(), set()
    for gid, url, title, pile, bk, links in idx:
        for l in json.loads(links or "[]"):
            if l[5] != "a" or len(l) < 7 or not l[6]: continue
            tgt = urldefrag(idurl.get(l[0], ""))[0]
            tp = url_pile.get(tgt)
            if tp is None or (tgt, l[4], l[6]) in seen_a: continue
            seen_a.add((tgt, l[4], l[6])); anchor.setdefault(tp, []).append(l[6])
        if bk:
            for href, text in entries(body(ROOTS[tree], bk), url):
                tgt, frag = urldefrag(href)
                tp = url_pile.get(tgt)
                if tp is None or tgt == urldefrag(url)[0] or is_index(tgt, "") or (tgt, frag, text) in seen_e: continue
                seen_e.add((tgt, frag, text)); entry.setdefault(tp, []).append(text)
    # drop links from index pages to other index pages (letter navigation) for anchor too
    idx_piles = {g[3] for g in idx}
    for d in (anchor, entry):
        for p in list(d):
            if p in idx_piles: del d[p]
    out = f"{W}/terms_{tree}.db"
    if os.path.exists(out): os.remove(out)
    o = sqlite3.connect(out)
    allp = [r[0] for r in db.execute("SELECT text_pile_id FROM text_pile")]
    for name, d in (("anchor", anchor), ("entry", entry)):
        o.execute(f"CREATE VIRTUAL TABLE {name} USING fts5(terms)")
        o.executemany(f"INSERT INTO {name}(rowid, terms) VALUES (?,?)", [(p, " ; ".join(d.get(p, []))) for p in allp])
    o.commit()
    print(f"{tree}: {len(idx)} index pages; pages with terms: anchor {len(anchor)} entry {len(entry)}; "
          f"entries anchor {len(seen_a)} entry {len(seen_e)}")
    if verbose:
        for gid, url, title, *_ in idx[:40]: print("   ", url)
    return anchor, entry, url_pile

if __name__ == "__main__":
    for t in sys.argv[1:] or ROOTS:
        build(t, verbose="-v" in sys.argv)
