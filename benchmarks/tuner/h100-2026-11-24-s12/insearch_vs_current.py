"""A re-search against the set's current picks, in the search's own timing (session 12, call 2).

    python benchmarks/tuner/h100-2026-11-24-s12/insearch_vs_current.py TUNE_STORE RUN_ID [GAIN OUT_DIR]

For each config the search covered: the current manifest pick's time in this search (same kernel
and variant; its finalist time when it was one) over the search's choice. With GAIN and OUT_DIR,
writes OUT_DIR/{oldpicks,newpicks}/h100_F32F16F16F32/manifest.json for the configs whose choice
was more than GAIN (e.g. 1.02) faster: two sets to bench side by side (call3.sh).
Run from the repository root before the manifest takes the new picks.
"""

import json
import math
import sys

import duckdb
from cuda_l2_explorer.tuner import manifest as mf

store, run = sys.argv[1], sys.argv[2]
c = duckdb.connect(store, read_only=True)
cur = mf.load("kernels/h100_F32F16F16F32/manifest.json")
old = {(x["m"], x["n"], x["k"]): x for x in cur["configs"]}
rows = c.execute(
    "select m,n,k,kernel,variant,stage,median,chosen from search_log where run_id=? and status='ok'", [run]
).fetchall()
by = {}
for m, n, k, kern, var, stage, med, chosen in rows:
    by.setdefault((m, n, k), []).append((kern, json.loads(var or "{}"), stage, med, chosen))
ratios = []
missing = 0
for cfg, cands in by.items():
    o = old[cfg]
    ov = {kk: o["variant"].get(kk) for kk in ("decomposition", "raster", "splits", "swizzle")}
    mine = [x for x in cands if x[0] == o["kernel_name"] and all(x[1].get(kk) == v for kk, v in ov.items())]
    ch = [x for x in cands if x[4]]
    if not mine or not ch:
        missing += 1
        continue
    st = max(x[2] for x in ch)
    mt = [x[3] for x in mine if x[2] == st] or [min(x[3] for x in mine)]
    ratios.append((mt[0] / ch[0][3], cfg))
g = math.exp(sum(math.log(r) for r, _ in ratios) / len(ratios))
print(
    f"{len(by)} configs, old pick found in {len(ratios)} ({missing} not): in-search old/new geomean {g:.4f}; "
    f">3% faster {sum(r > 1.03 for r, _ in ratios)}, >10% {sum(r > 1.10 for r, _ in ratios)}"
)
for r, cfg in sorted(ratios, reverse=True)[:12]:
    print(cfg, round(r, 3))

if len(sys.argv) > 3:  # write old/new pick sets of the configs gaining more than argv[3] in-search
    import copy
    import pathlib

    from cuda_l2_explorer.db.store import Store
    from cuda_l2_explorer.tuner.search import manifest_entries

    c.close()
    with Store.open(store, with_bundled=False, views=False, read_only=True) as s:
        new = {(e["m"], e["n"], e["k"]): e for e in manifest_entries(s, [run])}
    pick = sorted(cfg for r, cfg in ratios if r > float(sys.argv[3]))
    out = pathlib.Path(sys.argv[4])
    for name, src in (("oldpicks", old), ("newpicks", new)):
        m = copy.deepcopy(cur)
        m["configs"] = [src[c] for c in pick]
        d = out / name / "h100_F32F16F16F32"
        d.mkdir(parents=True, exist_ok=True)
        mf.save(m, d / "manifest.json")
    print(len(pick), "configs ->", out, ",".join("_".join(map(str, c)) for c in pick))
