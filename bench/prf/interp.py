import os
import itertools, pickle, prf, search as S
trees = [(prf.Tree(n, d), S.read_queries(q)) for n, d, q in S.TREES]
base = {t.name: prf.evaluate(t, qs) for t, qs in trees}
print("setting (interpolated)".ljust(28) + "".join(f"{t.name:>14}" for t, _ in trees))
print("baseline".ljust(28) + "".join(f"  {base[t.name][0]:.3f}/{base[t.name][1]:.3f}" for t, _ in trees))
results = []
for mode, k, m, w in itertools.product(["tfidf", "rm3"], [3, 5, 10], [5, 10, 20], [0.05, 0.1, 0.2, 0.3, 0.5]):
    res = {t.name: prf.evaluate(t, qs, k=k, m=m, w=w, mode=mode, interp=True) for t, qs in trees}
    worse = any(res[n][0] < base[n][0] - 1e-9 for n in res); better = any(res[n][0] > base[n][0] + 1e-9 for n in res)
    results.append(((mode, k, m, w), res, better and not worse))
    print(f"{mode} k={k:<2} m={m:<2} λ={w:<5}".ljust(28) + "".join(f"  {res[t.name][0]:.3f}/{res[t.name][1]:.3f}" for t, _ in trees) + ("  YES" if (better and not worse) else ""), flush=True)
pickle.dump((base, results), open(os.path.join(S.WORK, "results-interp.pkl"), "wb"))
