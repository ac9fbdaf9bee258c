"""Per-query rank moves of a variant vs baseline, from results.json (written by idxeval.py / intcol.py)."""
import json, os, sys
res = json.load(open(sys.argv[2] if len(sys.argv) > 2 else os.path.join(os.environ["PRF_WORK"], "results.json")))
v = sys.argv[1]
for tree in ("python", "sphinx", "pg", "flask"):
    b, x = res.get(f"baseline|{tree}"), res.get(f"{v}|{tree}")
    if not x: continue
    for (q, rb, tb), (_, rv, tv) in zip(b, x):
        if rb != rv:
            f = lambda r: r or "-"
            print(f"{tree:6} {'UP  ' if (rv and (not rb or rv < rb)) else 'DOWN'} {f(rb)}->{f(rv)}  {q!r}  top1 now {tv}")
