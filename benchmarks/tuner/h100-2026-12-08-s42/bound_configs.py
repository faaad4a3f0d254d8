"""The large configs whose best baseline Nsight Compute should profile for the tensor-pipe bound,
with the cuBLASLt candidate that is (or stands in for) each one's best baseline.

    python bound_configs.py MEASUREMENTS RUN [COUNT] > bound_configs.txt

From a harness-3 grid (device time, best of the seven baselines): COUNT (default 24) configs of
the run GPU's large regime with K >= 1024, evenly spaced in 2MNK (12288x12288x2048 always among
them: session 39 profiled torch.matmul's kernel there), one ``M_N_K@<layout><index>`` word a line
for ncu_driver.py. The candidate: an auto-tuned row's own (its message: "algorithm I of N", I
0-based), a heuristic row's top-1 (index 0); cuBLAS-nn/tn's default algorithm is no cuBLASLt
candidate, so the same layout's top-1 stands in (large_bound.py says so); torch.matmul needs
none (ncu_driver profiles it at every config).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import duckdb

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[0] / "movement_floor"))
from ceilings import run_gpu  # noqa: E402
from cuda_l2_explorer.db.shapes import Shape, regime  # noqa: E402
from cuda_l2_explorer.db.views import BASELINES  # noqa: E402

ALWAYS = (12288, 12288, 2048)


Config = tuple[int, int, int]


def grid_rows(measurements: str, run: str) -> dict[tuple[Config, str], tuple[float, str]]:
    """(device time, message) of every implementation per config of the run."""
    rows = (
        duckdb.connect()
        .execute(
            "SELECT m, n, k, implementation, median, coalesce(message, '') "
            f"FROM read_parquet('{measurements}') WHERE metric = 'device_time' AND status = 'ok' "
            "AND NOT padded AND starts_with(run_id, ?)",
            [run],
        )
        .fetchall()
    )
    return {((m, n, k), impl): (t, message) for m, n, k, impl, t, message in rows}


def best_baselines(rows: dict[tuple[Config, str], tuple[float, str]]) -> dict[Config, tuple[str, str]]:
    """(implementation, message) of the fastest of the seven baselines per config (grid_rows)."""
    best: dict[Config, tuple[float, str, str]] = {}
    for (config, impl), (t, message) in rows.items():
        if impl in BASELINES and (config not in best or (t, impl) < best[config][:2]):
            best[config] = (t, impl, message)
    return {config: (impl, message) for config, (_, impl, message) in best.items()}


def candidate(implementation: str, message: str) -> str:
    """The ncu_driver suffix that profiles the baseline's kernel ('' for torch.matmul)."""
    if implementation == "torch.matmul":
        return ""
    layout = implementation[-2:]
    if implementation.startswith("cuBLASLt-auto-tuning"):
        found = re.match(r"algorithm (\d+) of", message)
        if not found:
            raise SystemExit(f"{implementation}: no chosen algorithm in {message!r}")
        return f"@{layout}{found[1]}"
    return f"@{layout}0"  # heuristic top-1; for cuBLAS-nn/tn a stand-in


def spread(configs: list[tuple[int, int, int]], count: int) -> list[tuple[int, int, int]]:
    """``count`` configs evenly spaced in the sorted order of 2MNK, ALWAYS included when present."""
    ordered = sorted(configs, key=lambda c: (c[0] * c[1] * c[2], c))
    if count >= len(ordered):
        return ordered
    picked = {ordered[round(i * (len(ordered) - 1) / (count - 1))] for i in range(count)}
    if ALWAYS in ordered and ALWAYS not in picked:
        picked.remove(min(picked, key=lambda c: abs(c[0] * c[1] * c[2] - ALWAYS[0] * ALWAYS[1] * ALWAYS[2])))
        picked.add(ALWAYS)
    return sorted(picked, key=lambda c: (c[0] * c[1] * c[2], c))


def main(measurements: str, run: str, count: str = "24") -> None:
    gpu = run_gpu(measurements, run)
    best = best_baselines(grid_rows(measurements, run))
    large = [c for c in best if c[2] >= 1024 and regime(Shape(*c), gpu) == "large"]
    print(f"# {gpu} grid {run}: {count} of its {len(large)} large configs with K >= 1024 (bound_configs.py)")
    for config in spread(large, int(count)):
        print("_".join(map(str, config)) + candidate(*best[config]))


if __name__ == "__main__":
    main(*sys.argv[1:])
