"""Per config of a search log (call 1): the best stage-1 time of the multicast candidates against
the best of the single ones, and each multicast kernel against its twin. Any other pair of twins
by their name's suffix too (session 16: ``_rg``, the wgmma family's reduction through the
workspace, against the cluster's). TWIN names the twin's suffix (session 19: ``_rs`` against
``_rg``; default none, the cluster kernel); then the twins are also set side by side at the same
variant, by split count.

    python multicast_vs_single.py TUNE_STORE.duckdb [SUFFIX [TWIN]]
"""

from __future__ import annotations

import sys
from collections import defaultdict

import duckdb
from stats import geomean

MC = "_mc2"


def stage1(path: str) -> dict[tuple, list[tuple[str, str, float]]]:
    con = duckdb.connect(path, read_only=True)
    by: dict[tuple, list] = defaultdict(list)
    for m, n, k, kernel, candidate, median in con.execute(
        "SELECT m, n, k, kernel, candidate, median FROM main.search_log WHERE stage = 1 AND status = 'ok'"
    ).fetchall():
        by[m, n, k].append((kernel, candidate, median * 1e6))
    return by


def split_count(candidate: str) -> int:
    """The split count of a candidate string (``...,d=splitk,s=8``); 1 without split-K."""
    fields = dict(f.split("=", 1) for f in candidate.split(",") if "=" in f)
    return int(fields.get("s", 1)) if fields.get("d") == "splitk" else 1


def main(path: str, suffix: str = MC, twin: str = "") -> None:
    best, twins, by_splits = [], defaultdict(list), defaultdict(list)
    for cfg, rows in sorted(stage1(path).items()):
        mc = [r for r in rows if r[0].endswith(suffix)]
        one = [r for r in rows if not r[0].endswith(suffix)]
        if not mc or not one:
            continue
        bm, bo = min(mc, key=lambda r: r[2]), min(one, key=lambda r: r[2])
        best.append((bm[2] / bo[2], cfg, bm, bo))
        for kernel in {r[0] for r in mc}:
            a = min(r[2] for r in mc if r[0] == kernel)
            mate = kernel.removesuffix(suffix) + twin
            b = min((r[2] for r in one if r[0] == mate), default=None)
            if b:
                twins[kernel].append(a / b)
            if twin:  # the same variant of both, by split count
                mates = {r[1].split("|", 1)[1]: r[2] for r in one if r[0] == mate}
                for _, cand, us in (r for r in mc if r[0] == kernel):
                    variant = cand.split("|", 1)[1]
                    if variant in mates:
                        key = kernel.removesuffix(suffix), split_count(variant)
                        by_splits[key].append(us / mates[variant])
    ratios = [b[0] for b in best]
    print(
        f"{len(best)} configs: best {suffix} / best other, geomean {geomean(ratios):.3f}; "
        f"{suffix} faster by >1%: {sum(r < 0.99 for r in ratios)}, "
        f"slower by >1%: {sum(r > 1.01 for r in ratios)}"
    )
    for lo, hi in ((2048, 4096), (4097, 8192), (8193, 1 << 20)):
        sub = [b[0] for b in best if lo <= b[1][2] <= hi]
        if sub:
            print(f"K {lo}-{min(hi, 16384)}: {len(sub)} configs, geomean {geomean(sub):.3f}")
    for kernel, rs in sorted(twins.items()):
        print(f"{kernel} against its twin (best variant each): geomean {geomean(rs):.3f} over {len(rs)}")
    for (kernel, splits), rs in sorted(by_splits.items()):
        print(
            f"{kernel} x{splits} splits, {suffix} / {twin} at the same variant: "
            f"geomean {geomean(rs):.3f} over {len(rs)}"
        )
    for ratio, cfg, bm, bo in sorted(best)[:5] + sorted(best)[-5:]:
        print(f"{cfg}: {suffix} {bm[1]} {bm[2]:.2f} us | other {bo[1]} {bo[2]:.2f} us -> {ratio:.3f}")


if __name__ == "__main__":
    main(*sys.argv[1:4])
