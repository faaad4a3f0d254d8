"""The same picks benched with an old and a new library, old/new/old/new in one store (call 2; the
runs are told apart by the --library path in their command line: wglib2 is the new one).

    python libs_ab.py LIBS_STORE.duckdb
"""

from __future__ import annotations

import sys
from collections import defaultdict

import duckdb
from stats import geomean


def main(path: str) -> None:
    con = duckdb.connect(path, read_only=True)
    which = {
        run: "new" if "wglib2" in cmd else "old"
        for run, cmd in con.execute("SELECT run_id, command_line FROM runs").fetchall()
    }
    times: dict[tuple, dict[str, list[float]]] = defaultdict(lambda: {"old": [], "new": []})
    for run, m, n, k, median in con.execute(
        "SELECT run_id, m, n, k, median FROM measurements "
        "WHERE metric = 'device_time' AND implementation = 'kernel' AND status = 'ok'"
    ).fetchall():
        times[m, n, k][which[run]].append(median * 1e6)
    rows = []
    for cfg, t in sorted(times.items()):
        if min(len(t["old"]), len(t["new"])) >= 2:
            old, new = sum(t["old"]) / len(t["old"]), sum(t["new"]) / len(t["new"])
            rows.append((old / new, cfg, old, new, max(t["old"]) / min(t["old"])))
    ratios = [r[0] for r in rows]
    spread = sorted(r[4] for r in rows)[len(rows) // 2]
    print(
        f"{len(rows)} configs: old/new geomean {geomean(ratios):.4f}; new faster by >1%: "
        f"{sum(r > 1.01 for r in ratios)}, slower by >1%: {sum(r < 0.99 for r in ratios)}; "
        f"the old library's two runs differ by {spread:.4f} (median max/min)\n"
    )
    print("| config | old, us | new, us | old/new |\n|---|---|---|---|")
    for ratio, cfg, old, new, _ in sorted(rows)[:4] + sorted(rows)[-6:]:
        print(f"| {'x'.join(map(str, cfg))} | {old:.2f} | {new:.2f} | {ratio:.3f} |")


if __name__ == "__main__":
    main(sys.argv[1])
