"""The movement floor untiled and tiled, carried over to grid dd023a82 through cuBLAS (as
movement_floor/ceilings.py does), per regime and K band: the geomean ceiling by the untiled floor,
by the fastest tiled movement of one kind (ROWS: `tile_` for 16-byte loads through L1, call 2;
`bulk_` for bulk copies into shared memory, call 7), ours over the best baseline, and this run's
floor over session 29's (the floor's reproducibility); the tiles that were fastest.

    python benchmarks/tuner/h200-2026-11-28-s30/tiled_ceilings.py [CALL ROWS] > CALL/tiled_ceilings.txt

CALL defaults to call2 and ROWS to tile_ (call 7: `call7 bulk_`).
"""

from __future__ import annotations

import collections
import math
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "movement_floor"))
from ceilings import MOVES, floors, grid  # noqa: E402
from cuda_l2_explorer.db.shapes import Shape, regime  # noqa: E402

ROOT = HERE.parents[2]


def geomean(values: list[float]) -> float:
    return math.exp(sum(map(math.log, values)) / len(values))


def main(call: str = "call2", rows_of: str = "tile_") -> None:
    now = floors(HERE / call / "floor.csv")
    before = floors(HERE.parent / "h200-2026-11-28-s29" / "call1" / "floor.csv")
    measured = grid(str(ROOT / "db" / "bundled" / "measurements.parquet"), "dd023a82")
    by_band = collections.defaultdict(list)
    for config, d in now.items():
        if config not in measured:
            continue
        best, nn, ours = measured[config]
        scale = nn / d["cublas"]  # this run's times in the grid's rotation
        tiles = {name: t * scale for name, t in d.items() if name.startswith(rows_of)}
        if not tiles:
            continue
        fastest = min(tiles, key=tiles.get)
        floor_now = min(d[m] for m in MOVES) * scale
        floor_before = min(before[config][m] for m in MOVES) * nn / before[config]["cublas"]
        band = (regime(Shape(*config), "h200"), "K<=256" if config[2] <= 256 else "K>256")
        row = (best / floor_now, best / tiles[fastest], best / ours, floor_now / floor_before, fastest)
        by_band[band].append(row)
    print("regime K | configs | ceiling untiled | by the best tiled movement | ours | floor now / s29's")
    for band in sorted(by_band):
        rows = by_band[band]
        figures = " ".join(f"{geomean([r[i] for r in rows]):.3f}" for i in range(4))
        print(band, len(rows), figures, collections.Counter(r[4] for r in rows).most_common(3))


if __name__ == "__main__":
    main(*sys.argv[1:3])
