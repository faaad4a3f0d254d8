"""Runs of the same configs in one store, two ways, compared: direct against a Dask cluster
(h100_cluster_vs_direct.sh), or one GPU against several (two_gpus.sh, ``--by gpus``).

    python benchmarks/cluster/compare_runs.py STORE.duckdb [--by cluster|gpus]

``--by cluster`` (the default): runs whose params name a ``cluster`` are the cluster's, the
others direct. ``--by gpus``: runs on one GPU are the reference, runs on more the other path.
Per implementation: the geomean over configs of other/reference device time (the medians of each
path's runs), and how many configs differ by more than the run-to-run spread (the reference runs'
own p10-p90). Then the wall time a config of each path: their difference (the Dask path's cost
per config), and their ratio (the throughput of several GPUs over one).
"""

from __future__ import annotations

import argparse
import json
import math
from collections import defaultdict

import duckdb

PATHS = {"cluster": ("direct", "cluster"), "gpus": ("one GPU", "several GPUs")}


def path_of(params: dict, by: str) -> str:
    """The run's path: ``PATHS[by]``'s reference (first) or other (second)."""
    reference, other = PATHS[by]
    if by == "cluster":
        return other if params.get("cluster") else reference
    return other if len(params.get("gpus") or [0]) > 1 else reference


def main(path: str, by: str = "cluster") -> None:
    con = duckdb.connect(path, read_only=True)
    ref_name, other_name = PATHS[by]
    runs = {
        run_id: path_of(json.loads(params), by)
        for run_id, params in con.execute("SELECT run_id, params FROM runs").fetchall()
    }
    times: dict[tuple, dict[str, list[tuple[float, float, float]]]] = defaultdict(lambda: defaultdict(list))
    for run_id, m, n, k, impl, median, p10, p90 in con.execute(
        "SELECT run_id, m, n, k, implementation, median, p10, p90 FROM measurements "
        "WHERE metric = 'device_time' AND NOT padded AND status = 'ok'"
    ).fetchall():
        times[(m, n, k, impl)][runs[run_id]].append((median, p10, p90))
    by_impl: dict[str, list[float]] = defaultdict(list)
    outside: dict[str, int] = defaultdict(int)
    for (*_, impl), paths in times.items():
        if not paths[ref_name] or not paths[other_name]:
            continue
        reference = sum(t[0] for t in paths[ref_name]) / len(paths[ref_name])
        other = sum(t[0] for t in paths[other_name]) / len(paths[other_name])
        low = min(t[1] for t in paths[ref_name])
        high = max(t[2] for t in paths[ref_name])
        by_impl[impl].append(other / reference)
        outside[impl] += not low <= other <= high
    print(
        f"| implementation | configs | {other_name} / {ref_name} (geomean) "
        f"| outside the {ref_name} runs' p10-p90 |"
    )
    print("|---|---|---|---|")
    for impl, ratios in sorted(by_impl.items()):
        geomean = math.exp(math.fsum(map(math.log, ratios)) / len(ratios))
        print(f"| {impl} | {len(ratios)} | {geomean:.4f} | {outside[impl]} |")
    walls: dict[str, list[float]] = defaultdict(list)
    for run_id, started, finished, configs in con.execute(
        "SELECT r.run_id, epoch(r.started_at), epoch(r.finished_at), count(*) FROM runs r "
        "JOIN run_configs c USING (run_id) GROUP BY ALL"
    ).fetchall():
        walls[runs[run_id]].append((finished - started) / configs)
    reference, other = (
        sum(walls[p]) / len(walls[p]) if walls[p] else math.nan for p in (ref_name, other_name)
    )
    print(
        f"\nWall time a config: {ref_name} {reference:.3f} s, {other_name} {other:.3f} s; "
        f"difference {other - reference:+.3f} s a config, throughput ratio {reference / other:.2f}x."
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("store")
    parser.add_argument("--by", choices=sorted(PATHS), default="cluster")
    args = parser.parse_args()
    main(args.store, args.by)
