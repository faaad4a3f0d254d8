"""Per shape, power_probe.py's sustained runs: our pick, the fastest of our other kernels and
torch.matmul (mean over rounds), their clocks and watts, and the geomeans over the shapes.

    python benchmarks/tuner/power_probe_report.py PROBE.jsonl [PROBE.jsonl ...]
"""

from __future__ import annotations

import json
import math
import statistics
import sys
from collections import defaultdict


def geomean(values: list[float]) -> float:
    return math.exp(sum(map(math.log, values)) / len(values))


def main(paths: list[str]) -> None:
    runs: dict[tuple, dict[str, list[dict]]] = defaultdict(lambda: defaultdict(list))
    picks: dict[tuple, str] = {}
    for path in paths:
        for line in open(path):
            row = json.loads(line)
            shape = (row["m"], row["n"], row["k"])
            runs[shape][row["impl"]].append(row)
            if row["pick"]:
                picks[shape] = row["impl"]

    def mean(rows: list[dict], key: str) -> float:
        return statistics.mean(r[key] for r in rows if r[key] is not None)

    print(
        "| shape | pick, us (MHz, W) | fastest other kernel, us (MHz) | torch.matmul, us (MHz) "
        "| pick / fastest | torch / fastest | torch / pick |"
    )
    print("|---|---|---|---|---|---|---|")
    ratios: dict[str, list[float]] = defaultdict(list)
    for shape in sorted(runs):
        impls = runs[shape]
        pick = picks[shape]
        others = [i for i in impls if i not in (pick, "torch.matmul")]
        best = min(others, key=lambda i: mean(impls[i], "us"))
        us = {i: mean(impls[i], "us") for i in (pick, best, "torch.matmul")}
        mhz = {i: mean(impls[i], "sm_mhz") for i in (pick, best, "torch.matmul")}
        row = (us[pick] / us[best], us["torch.matmul"] / us[best], us["torch.matmul"] / us[pick])
        for name, value in zip(("pick/fastest", "torch/fastest", "torch/pick"), row, strict=True):
            ratios[name].append(value)
        watts = mean(impls[pick], "watts")
        torch_us, torch_mhz = us["torch.matmul"], mhz["torch.matmul"]
        print(
            f"| {'x'.join(map(str, shape))} | {us[pick]:.1f} ({mhz[pick]:.0f}, {watts:.0f}) "
            f"| {us[best]:.1f} ({mhz[best]:.0f}) {best} | {torch_us:.1f} ({torch_mhz:.0f}) "
            f"| {row[0]:.3f} | {row[1]:.3f} | {row[2]:.3f} |"
        )
    print()
    for name, values in ratios.items():
        print(
            f"{name}: geomean {geomean(values):.3f} over {len(values)} shapes, "
            f"min {min(values):.3f}, max {max(values):.3f}"
        )


if __name__ == "__main__":
    main(sys.argv[1:])
