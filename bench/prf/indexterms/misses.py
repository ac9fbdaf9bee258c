"""Best rank any variant gave each baseline miss (results.json + results_int_*.json)."""
import json, os
R = {}
for fn in ("results.json", "results_int_entry.json", "results_int_anchor.json"):
    for k, v in json.load(open(os.path.join(os.environ["PRF_WORK"], fn))).items():
        R[(fn.replace("results", "").replace(".json", "") or "sep") + ":" + k] = v
base = {k.split("|")[1]: v for k, v in R.items() if k.startswith("sep:baseline")}
for tree, rows in base.items():
    for i, (q, r, top) in enumerate(rows):
        if r == 1: continue
        best = min(((v[i][1] or 99), k.split("|")[0]) for k, v in R.items() if k.endswith("|" + tree))
        print(f"{tree:6} base {r or '-'}  best {best[0] if best[0] < 99 else '-'} ({best[1]})  {q!r}  base top1 {top}")
