"""For each query not at rank 1 in the baseline: its best rank under any setting tried."""
import os, pickle, search as S
runs = []
for f in ["results-tfidf-rm3.pkl", "results-interp.pkl"]:
    base, results = pickle.load(open(os.path.join(S.WORK, f), "rb"))
    runs += [(f.split("-")[1].split(".")[0], cfg, res) for cfg, res, _ in results]
for name, dbf, qf in S.TREES:
    qs = S.read_queries(qf)
    for i, (text, rel) in enumerate(qs):
        rb = base[name][2][i]
        if rb == 1: continue
        ranks = [(res[name][2][i] or 99, f, cfg) for f, cfg, res in runs]
        n1 = sum(r == 1 for r, _, _ in ranks)
        best = min(ranks, key=lambda x: x[0])
        print(f"{name:6} base {rb or '-':>2}  best {best[0] if best[0] < 99 else '-':>2}  at rank 1 in {n1:3} of {len(runs)}  {text!r}")
