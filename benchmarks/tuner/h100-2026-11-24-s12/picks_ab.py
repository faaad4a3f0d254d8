"""Old against new picks, benched side by side (session 12, call 3: old, new, old, new).

    cd benchmarks/tuner/h100-2026-11-24-s12 && python picks_ab.py picks.duckdb.gz [GROUPS_JSON]  # or .xz

Per config: our kernel's device time in each run of each set, old/new (means of the repeats), and
the best of the baselines benched beside it (torch.matmul, cuBLASLt heuristic) over each. With
GROUPS_JSON ({GPU: {group: ["M_N_K", ...]}}, e.g. h100-2026-12-07-s40/v2_groups.json), the
geomean per group too, of the GPU the store names (a change's parts told apart in one A/B).
"""

from __future__ import annotations

import json
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


def summary(ratios: list[float]) -> str:
    return (
        f"{len(ratios)} configs: old/new geomean {geomean(ratios):.3f}; new faster by >1%: "
        f"{sum(r > 1.01 for r in ratios)}, slower by >1%: {sum(r < 0.99 for r in ratios)}"
    )


def main(path: Path, groups_path: Path | None = None) -> None:
    times = ab_times(path)
    print("| config | old, us | new, us | old/new | best baseline / new |")
    print("|---|---|---|---|---|")
    ratios: dict[tuple, float] = {}
    for shape, t in sorted(times.items()):
        old, new = (sum(t[s]) / len(t[s]) for s in ("oldpicks", "newpicks"))
        ratios[shape] = old / new
        shown = {s: ", ".join(f"{x * 1e6:.1f}" for x in t[s]) for s in ("oldpicks", "newpicks")}
        print(
            f"| {'x'.join(map(str, shape))} | {shown['oldpicks']} | {shown['newpicks']} | {old / new:.3f} "
            f"| {min(t['baseline']) / new:.3f} |"
        )
    print(f"\n{summary(list(ratios.values()))}")
    if groups_path:
        gpu = _open(path).execute("SELECT DISTINCT gpu FROM runs").fetchall()
        assert len(gpu) == 1, f"{path}: runs on {gpu}"
        for group, configs in json.loads(groups_path.read_text())[gpu[0][0]].items():
            shapes = [tuple(int(x) for x in c.split("_")) for c in configs]
            measured = [ratios[s] for s in shapes if s in ratios]
            print(f"{group}: {summary(measured) if measured else 'none of its configs measured'}")


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]) if len(sys.argv) > 2 else None)
