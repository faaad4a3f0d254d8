"""How far any kernel could get past the best baseline, per regime, by bounds measured on this
hardware (issue 15: where the 1.10 target cannot be reached, and why).

    python benchmarks/tuner/h200-2026-11-28-s28/regime_ceilings.py MEASUREMENTS RUN_PREFIX

Per config of a bundled grid (device time, best of the seven baselines), the time no kernel can
beat by these bounds:
- memory: A, B and C moved once at the device-to-device copy rate measured on the H200
  (4.3 TB/s, SPEC section 10), not the 4.8 TB/s of the data sheet (on an H100 3.0 TB/s, not 3.35:
  `ceiling_seconds(shape, "h100")`, for movement_floor/grid_bound.py);
- launch: an empty kernel of 256 CTAs in a CUDA graph, 0.95 us a call (tiny_floor/, measured on
  an H100; a lower bound for any kernel that loads and stores);
- compute: 2MNK at the tensor peak at the highest SM clock (989 TFLOP/s at 1830 MHz scaled to
  1980 MHz: 1070 TFLOP/s), which no kernel under the 700 W cap sustains.
The ceiling is best baseline / max(memory, launch, compute): an upper bound on our speedup there.
Printed per regime: configs, geomean ceiling, the share of configs whose ceiling is under 1.10,
and the geomean of ours over the best baseline beside it. The compute bound is loose for the
large regime, where ncu measured the best baseline's tensor pipe busy 98.2% of the cycles at
12288x12288x2048 (call3/ncu3): at the same clock no kernel takes more than 1.8% fewer cycles.
"""

from __future__ import annotations

import math
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from cuda_l2_explorer.db.shapes import REGIMES, Shape, regime
from loss_by_regime import grid_times

COPY_RATE = {"h200": 4.3e12, "h100": 3.0e12}  # bytes/s, device-to-device copies (SPEC section 10)
LAUNCH_FLOOR_S = 0.95e-6  # empty 256-CTA kernel in a CUDA graph (tiny_floor/, H100)
TENSOR_PEAK_MAX_CLOCK = 989e12 * 1980 / 1830  # FLOP/s at the highest SM clock


def ceiling_seconds(shape: Shape, gpu: str = "h200") -> float:
    return max(shape.bytes / COPY_RATE[gpu], LAUNCH_FLOOR_S, shape.flops / TENSOR_PEAK_MAX_CLOCK)


def main(path: str, run: str) -> None:
    times = grid_times(Path(path), run)
    rows = defaultdict(list)
    for config, (base, ours) in times.items():
        shape = Shape(*config)
        rows[regime(shape, "h200")].append((base / ceiling_seconds(shape), base / ours))
    print(
        "| regime (H200) | configs | ceiling over the best baseline (geomean) "
        "| configs with ceiling < 1.10 | ours now |"
    )
    print("|---|---|---|---|---|")
    for name in REGIMES:
        if not rows[name]:
            continue
        ceil = math.exp(sum(math.log(c) for c, _ in rows[name]) / len(rows[name]))
        ours = math.exp(sum(math.log(o) for _, o in rows[name]) / len(rows[name]))
        under = sum(c < 1.10 for c, _ in rows[name])
        print(f"| {name} | {len(rows[name])} | {ceil:.2f} | {under} | {ours:.3f} |")


if __name__ == "__main__":
    main(*sys.argv[1:3])
