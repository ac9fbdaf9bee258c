"""Best setting (in the brief's range k 3..10, m 5..20, w 0.1..0.5) by queries at rank 1
over all trees, then MRR sum; and the per-query moves under it. Also the gentlest setting overall."""
import os, pickle, sys, prf, search as S
cands = []
for f, form in [("results-tfidf-rm3.pkl", "additive"), ("results-interp.pkl", "interpolated")]:
    base, results = pickle.load(open(os.path.join(S.WORK, f), "rb"))
    for (mode, k, m, w), res, ok in results:
        hits = sum(round(res[n][0] * len(res[n][2])) for n in res)
        cands.append((hits, sum(res[n][1] for n in res), form, mode, k, m, w, res))
bh = sum(round(base[n][0] * len(base[n][2])) for n in base)
print(f"baseline: {bh} of 119 queries at rank 1")
inrange = [c for c in cands if c[6] >= 0.1]
for c in sorted(inrange, key=lambda c: (-c[0], -c[1]))[:5]:
    print(f"  {c[0]} at rank 1, MRR sum {c[1]:.3f}: {c[2]} {c[3]} k={c[4]} m={c[5]} w={c[6]}")
best = max(inrange, key=lambda c: (c[0], c[1]))
_, _, form, mode, k, m, w, res = best
print(f"\nmoves under {form} {mode} k={k} m={m} w={w} (rank base -> new, '-' = not in top 10):")
for name, dbf, qf in S.TREES:
    t = prf.Tree(name, dbf); qs = S.read_queries(qf)
    for (text, rel), rb, rn in zip(qs, base[name][2], res[name][2]):
        if rb != rn:
            _, exp = t.rank(text, k=k, m=m, w=w, mode=mode, interp=form == "interpolated")
            arrow = "up" if (rn and (not rb or rn < rb)) else "down"
            print(f"  {name:6} {arrow:4} {rb or '-'} -> {rn or '-'}  {text!r}  +[{' '.join(x for x, _ in exp[:6])}]")
