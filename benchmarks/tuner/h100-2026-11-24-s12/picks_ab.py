"""Old against new picks, benched side by side (session 12, call 3: old, new, old, new).

    cd benchmarks/tuner/h100-2026-11-24-s12 && python picks_ab.py picks.duckdb.gz  # or .xz

Per config: our kernel's device time in each run of each set, old/new (means of the repeats), and
the best of the baselines benched beside it (torch.matmul, cuBLASLt heuristic) over each.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "harness" / "v3"))
from rotation_ab import _open, geomean


def ab_times(path: Path) -> dict[tuple, dict]:
    """Per config: our kernel's device times per set ("oldpicks", "newpicks") and the baselines'."""
    con = _open(path)
    times: dict[tuple, dict] = defaultdict(lambda: defaultdict(list))
    for set_id, m, n, k, impl, median in con.execute(
        "SELECT r.set_id, m, n, k, implementation, median FROM measurements JOIN runs r USING (run_id) "
        "WHERE metric = 'device_time' AND NOT padded AND measurements.status = 'ok' ORDER BY r.started_at"
    ).fetchall():
        times[m, n, k][set_id.split("/")[0] if impl == "kernel" else "baseline"].append(median)
    return times


def main(path: Path) -> None:
    times = ab_times(path)
    print("| config | old, us | new, us | old/new | best baseline / new |")
    print("|---|---|---|---|---|")
    ratios = []
    for shape, t in sorted(times.items()):
        old, new = (sum(t[s]) / len(t[s]) for s in ("oldpicks", "newpicks"))
        ratios.append(old / new)
        shown = {s: ", ".join(f"{x * 1e6:.1f}" for x in t[s]) for s in ("oldpicks", "newpicks")}
        print(
            f"| {'x'.join(map(str, shape))} | {shown['oldpicks']} | {shown['newpicks']} | {old / new:.3f} "
            f"| {min(t['baseline']) / new:.3f} |"
        )
    print(
        f"\n{len(ratios)} configs: old/new geomean {geomean(ratios):.3f}; new faster by >1%: "
        f"{sum(r > 1.01 for r in ratios)}, slower by >1%: {sum(r < 0.99 for r in ratios)}"
    )


if __name__ == "__main__":
    main(Path(sys.argv[1]))
