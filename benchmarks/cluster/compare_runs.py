"""Direct against cluster runs of the same configs in one store (h100_cluster_vs_direct.sh).

    python benchmarks/cluster/compare_runs.py STORE.duckdb

Runs whose params name a ``cluster`` are the cluster's, the others direct. Per implementation:
the geomean over configs of cluster/direct device time (the medians of each path's runs), and how
many configs differ by more than the run-to-run spread (the direct runs' own p10-p90). Then the
wall time a config of each path, and the difference: the Dask path's cost per config on a GPU.
"""

from __future__ import annotations

import json
import math
import sys
from collections import defaultdict

import duckdb


def main(path: str) -> None:
    con = duckdb.connect(path, read_only=True)
    runs = {
        run_id: ("cluster" if json.loads(params).get("cluster") else "direct")
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
        if not paths["direct"] or not paths["cluster"]:
            continue
        direct = sum(t[0] for t in paths["direct"]) / len(paths["direct"])
        cluster = sum(t[0] for t in paths["cluster"]) / len(paths["cluster"])
        low = min(t[1] for t in paths["direct"])
        high = max(t[2] for t in paths["direct"])
        by_impl[impl].append(cluster / direct)
        outside[impl] += not low <= cluster <= high
    print("| implementation | configs | cluster / direct (geomean) | outside the direct runs' p10-p90 |")
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
    direct, cluster = (sum(walls[p]) / len(walls[p]) if walls[p] else math.nan for p in ("direct", "cluster"))
    print(
        f"\nWall time a config: direct {direct:.3f} s, cluster {cluster:.3f} s; "
        f"the Dask path costs {cluster - direct:+.3f} s a config."
    )


if __name__ == "__main__":
    main(sys.argv[1])
