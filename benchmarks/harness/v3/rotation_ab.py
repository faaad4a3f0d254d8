"""The rotation-cap A/B from a store holding two runs of the same configs that differ only in
``bench --rotation-cap``: per config, the input sets and their L2 span under each cap, our
kernel's and the best baseline's device time, and the ratio between them.

    python benchmarks/harness/v3/rotation_ab.py STORE.duckdb[.gz|.xz]

Prints a Markdown table, then the geomean of cold / capped time (ours, best baseline,
torch.matmul) and of the ratio under each cap.
"""

from __future__ import annotations

import gzip
import json
import lzma
import math
import shutil
import sys
import tempfile
from pathlib import Path

import duckdb
from cuda_l2_explorer.db.views import BASELINES


def _open(path: Path) -> duckdb.DuckDBPyConnection:
    """A store read-only, unpacked first when it is committed gzip- or xz-compressed."""
    unpack = {".gz": gzip.open, ".xz": lzma.open}.get(path.suffix)
    if unpack:
        plain = Path(tempfile.mkdtemp()) / path.stem
        with unpack(path) as src, plain.open("wb") as dst:
            shutil.copyfileobj(src, dst)
        path = plain
    return duckdb.connect(str(path), read_only=True)


def geomean(values: list[float]) -> float:
    return math.exp(math.fsum(map(math.log, values)) / len(values))


def main(path: Path) -> None:
    con = _open(path)
    caps = dict(
        con.execute(
            "SELECT run_id, json_extract(params, '$.protocol.rotation_cap')::INT FROM runs"
        ).fetchall()
    )
    if len(set(caps.values())) != 2:
        sys.exit(f"want two runs with different rotation caps, found {sorted(caps.values())}")
    low, high = sorted(set(caps.values()))
    times: dict[tuple, dict] = {}
    for run, m, n, k, impl, median in con.execute(
        "SELECT run_id, m, n, k, implementation, median FROM measurements "
        "WHERE metric = 'device_time' AND NOT padded AND status = 'ok'"
    ).fetchall():
        times.setdefault((m, n, k), {})[caps[run], impl] = median
    details = {
        (caps[run], m, n, k): json.loads(d)
        for run, m, n, k, d in con.execute("SELECT run_id, m, n, k, details FROM run_configs").fetchall()
    }
    print(f"| config | sets (span) at {low} | sets (span) at {high} | ours, us | best baseline, us | ratio |")
    print("|---|---|---|---|---|---|")
    ours, best, torch_mm, ratio_low, ratio_high = [], [], [], [], []
    for shape, t in sorted(times.items()):
        if (low, "kernel") not in t or (high, "kernel") not in t:
            continue
        b = {
            cap: min(v for (c, impl), v in t.items() if c == cap and impl in BASELINES) for cap in (low, high)
        }
        o = {cap: t[cap, "kernel"] for cap in (low, high)}
        ours.append(o[high] / o[low])
        best.append(b[high] / b[low])
        torch_mm.append(t[high, "torch.matmul"] / t[low, "torch.matmul"])
        ratio_low.append(b[low] / o[low])
        ratio_high.append(b[high] / o[high])
        d = {cap: details[(cap, *shape)] for cap in (low, high)}
        print(
            f"| {'x'.join(map(str, shape))} | {d[low]['rotation_sets']} ({d[low]['l2_span']:.2f}) "
            f"| {d[high]['rotation_sets']} ({d[high]['l2_span']:.2f}) "
            f"| {o[low] * 1e6:.2f} -> {o[high] * 1e6:.2f} | {b[low] * 1e6:.2f} -> {b[high] * 1e6:.2f} "
            f"| {ratio_low[-1]:.3f} -> {ratio_high[-1]:.3f} |"
        )
    print(
        f"\n{len(ours)} configs. Cold ({high}) / capped ({low}) time, geomean: ours {geomean(ours):.3f}, "
        f"best baseline {geomean(best):.3f}, torch.matmul {geomean(torch_mm):.3f}. Ours over the best "
        f"baseline: {geomean(ratio_low):.3f} at {low}, {geomean(ratio_high):.3f} at {high}."
    )


if __name__ == "__main__":
    main(Path(sys.argv[1]))
