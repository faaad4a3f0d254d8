"""How far each pick of ours is above the movement of its own tiling (issue 15, the tiny regime's
mid-size band): per config, our pick's device time in the grid against the stream_TMxTN_sS row of
the pick's tile and splits in a floor run (movement_floor.cu; its streamr twin, with the splits'
reduction, where measured), carried over through cuBLAS as
ceilings.py does. What is left above that row is the pick's MMAs, epilogue, barriers and start-up.

    python benchmarks/tuner/movement_floor/pick_vs_movement.py MANIFEST MEASUREMENTS RUN FLOOR_CSV

Prints, per K, the configs whose pick's tiling has a stream row, the geomean of ours over that row
(how much slower than its own movement), of the fastest stream row over the pick's (how much less a
better tiling would move) and of the best baseline over the pick's row; then the ten configs
furthest above their row.
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ceilings import floors, gm, grid


def stream_row(entry: dict) -> str:
    """The stream row of a manifest entry's tiling (tile, splits: one unless split-K)."""
    kernel, variant = entry["kernel"], entry.get("variant") or {}
    splits = int(variant.get("splits", 1)) if int(variant.get("decomposition", 0)) == 2 else 1
    return f"stream_{kernel['tile_m']}x{kernel['tile_n']}_s{splits}"


def compare(
    picks: dict[tuple[int, int, int], str], floor: dict, measured: dict
) -> list[tuple[tuple[int, int, int], float, float, float]]:
    """(config, ours / pick's row, pick's row / fastest row, best baseline / pick's row), in grid
    time, for every config whose pick's row was measured."""
    out = []
    for config, row in picks.items():
        d = floor.get(config, {})
        if "streamr" + row[6:] in d:  # a split pick's row with its reduction (session 38's rows)
            row = "streamr" + row[6:]
        if row not in d or config not in measured or "cublas" not in d:
            continue
        best, nn, ours = measured[config]
        scale = nn / d["cublas"]  # floor-run seconds to the grid's
        fastest = min(t for name, t in d.items() if name.startswith("stream"))  # stream_ and streamr_
        out.append((config, ours / (d[row] * scale), d[row] / fastest, best / (d[row] * scale)))
    return out


def main(manifest: str, measurements: str, run: str, floor_csv: str) -> None:
    entries = json.loads(Path(manifest).read_text())["configs"]
    picks = {
        (e["m"], e["n"], e["k"]): stream_row(e)
        for e in entries
        if "tile_m" in e["kernel"] and "tile_n" in e["kernel"]
    }
    rows = compare(picks, floors(Path(floor_csv)), grid(measurements, run))
    by_k = defaultdict(list)
    for r in rows:
        by_k[r[0][2]].append(r)
    print(
        "| K | configs | ours / our tiling's movement | our tiling's / the fastest tiling's movement "
        "| best baseline / ours' movement |"
    )
    print("|---|---|---|---|---|")
    for k in sorted(by_k):
        rs = by_k[k]
        ratios = " | ".join(f"{gm([r[i] for r in rs]):.2f}" for i in (1, 2, 3))
        print(f"| {k} | {len(rs)} | {ratios} |")
    worst = sorted(rows, key=lambda r: -r[1])[:10]
    print("furthest above their movement:", ", ".join(f"{m}x{n}x{k} {o:.2f}" for (m, n, k), o, _, _ in worst))


if __name__ == "__main__":
    main(*sys.argv[1:5])
