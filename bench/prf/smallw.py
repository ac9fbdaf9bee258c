import itertools, sys, prf, search as S
trees = [(prf.Tree(n, d), S.read_queries(q)) for n, d, q in S.TREES]
base = {t.name: prf.evaluate(t, qs) for t, qs in trees}
print("baseline".ljust(28) + "".join(f"  {base[t.name][0]:.3f}/{base[t.name][1]:.3f}" for t, _ in trees))
for mode, k, m, w in [("tfidf", 5, 10, 1e-6), ("rm3", 5, 10, 1e-6)] + list(itertools.product(["tfidf", "rm3"], [3, 5, 10], [5, 10, 20], [0.01, 0.02, 0.05])):
    res = {t.name: prf.evaluate(t, qs, k=k, m=m, w=w, mode=mode) for t, qs in trees}
    worse = any(res[n][0] < base[n][0] - 1e-9 for n in res); better = any(res[n][0] > base[n][0] + 1e-9 for n in res)
    print(f"{mode} k={k:<2} m={m:<2} w={w:<6}".ljust(28) + "".join(f"  {res[t.name][0]:.3f}/{res[t.name][1]:.3f}" for t, _ in trees) + ("  YES" if (better and not worse) else ""), flush=True)
