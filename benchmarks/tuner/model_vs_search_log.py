"""How well the search's cost model ranks the candidates that were measured (graph-timed logs).

    python benchmarks/tuner/model_vs_search_log.py LIBRARY_JSON LOG [LOG ...]

LOG is a tune store (.duckdb, its ``search_log``) or a search-log CSV.gz as the session folders
keep them (columns m, n, k, candidate, stage, status, median_us; LIBRARY_JSON, the library's
``.json``, gives a CSV's kernel parameters). Per config with at least 4 measured candidates:
``regret_top1``, the geomean over configs of (measured time of the model's first choice) / (best
measured); ``regret_top8``, the same for the best of the model's first eight; ``spearman``, the
mean rank correlation of predicted and measured times. Printed for ``search_space.predict`` and
for ``predict_with_epilogue`` (the CUTLASS kernels' C store per tile added, overlapped by the
ping-pong schedule: an alternative tried in session 11, not adopted).
"""

from __future__ import annotations

import collections
import csv
import gzip
import json
import math
import statistics
import sys
from collections.abc import Callable, Mapping
from typing import Any

import duckdb
from cuda_l2_explorer.db.shapes import Shape
from cuda_l2_explorer.tuner import search_space as ss
from cuda_l2_explorer.tuner.search_space import DECOMPOSITION, RASTER, Variant

Config = tuple[int, int, int]
Measured = dict[Config, dict[str, tuple[Mapping[str, Any], Variant, float]]]
Predictor = Callable[[int, int, int, Mapping[str, Any], Variant, int, float], float]


def variant_of(key: str) -> Variant:
    """The Variant a candidate key's suffix names (``...|r=along_n,sw=4,d=splitk,s=2``)."""
    fields = dict(part.split("=") for part in key.split("|", 1)[1].split(","))
    return Variant(RASTER[fields["r"]], int(fields["sw"]), DECOMPOSITION[fields["d"]], int(fields["s"]))


def load(paths: list[str], library: Mapping[str, Mapping[str, Any]]) -> Measured:
    out: Measured = collections.defaultdict(dict)
    for path in paths:
        if path.endswith(".csv.gz"):
            with gzip.open(path, "rt") as f:
                for r in csv.DictReader(f):
                    if r["stage"] == "1" and r["status"] == "ok" and r["median_us"]:
                        kernel = r["candidate"].split("|", 1)[0]
                        shape = (int(r["m"]), int(r["n"]), int(r["k"]))
                        out[shape][r["candidate"]] = (
                            library[kernel],
                            variant_of(r["candidate"]),
                            float(r["median_us"]) * 1e-6,
                        )
            continue
        con = duckdb.connect(path, read_only=True)
        sql = (
            "SELECT m, n, k, candidate, params, variant, median FROM search_log "
            "WHERE stage = 1 AND status = 'ok' AND median IS NOT NULL"
        )
        for m, n, k, cand, params, variant, median in con.execute(sql).fetchall():
            out[m, n, k][cand] = (json.loads(params), Variant(**json.loads(variant)), median)
        con.close()
    return out


def predict_with_epilogue(
    m: int, n: int, k: int, params: Mapping[str, Any], v: Variant, sms: int, bandwidth: float
) -> float:
    base = ss.predict(m, n, k, params, v, sms, bandwidth)
    if params.get("family") != "cutlass_sm90" or v.decomposition or params.get("scheduler") == "streamk":
        return base
    rows, cols = ss.user_tile(params)
    tiles = math.ceil(m / rows) * math.ceil(n / cols)
    cluster = int(params.get("cluster_m", 1)) * int(params.get("cluster_n", 1))
    slots = max(1, (sms // cluster) * cluster)
    mainloop = 2.0 * rows * cols * k / (ss.PEAK_FLOPS / sms * ss.tile_efficiency(rows, cols))
    store = rows * cols * 2 / (bandwidth / sms)  # one tile of C at the SM's share of HBM
    per_tile = max(mainloop, store) if params.get("schedule") == "pingpong" else mainloop + store
    return max(math.ceil(tiles / slots) * per_tile, Shape(m, n, k).bytes / bandwidth) + ss.LAUNCH_OVERHEAD_S


def ranks(values: list[float]) -> list[int]:
    order = sorted(range(len(values)), key=values.__getitem__)
    out = [0] * len(values)
    for rank, i in enumerate(order):
        out[i] = rank
    return out


def evaluate(measured: Measured, predict: Predictor, sms: int = 132, bandwidth: float = 3.35e12) -> dict:
    top1, top8, rhos = [], [], []
    for shape, cands in measured.items():
        pairs = [(predict(*shape, p, v, sms, bandwidth), t) for p, v, t in cands.values()]
        if len(pairs) < 4:
            continue
        best = min(t for _, t in pairs)
        ranked = sorted(pairs)
        top1.append(math.log(ranked[0][1] / best))
        top8.append(math.log(min(t for _, t in ranked[:8]) / best))
        predicted_ranks = ranks([p for p, _ in pairs])
        if len(set(p for p, _ in pairs)) > 1:
            rhos.append(statistics.correlation(predicted_ranks, ranks([t for _, t in pairs])))
    return {
        "configs": len(top1),
        "regret_top1": round(math.exp(statistics.mean(top1)), 4),
        "regret_top8": round(math.exp(statistics.mean(top8)), 4),
        "spearman": round(statistics.mean(rhos), 3),
    }


def main(library_json: str, *logs: str) -> None:
    library = {c["name"]: c for c in json.load(open(library_json))["configs"]}
    measured = load(list(logs), library)
    for name, fn in (("search_space.predict", ss.predict), ("predict_with_epilogue", predict_with_epilogue)):
        print(name, evaluate(measured, fn))


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    main(*sys.argv[1:])
