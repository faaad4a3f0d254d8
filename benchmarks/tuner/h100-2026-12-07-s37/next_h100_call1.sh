#!/usr/bin/env bash
# Planned in session 37 for the next session lent an H100 (issue 15; not run here), ~590 s:
# 1. the H100's movement floor, untiled and bulk-tiled rows, on the 698 configs outside its large
#    regime (~120 s with the build; session 37's call 4 got no machine): then here
#    `grid_bound.py db/bundled/measurements.parquet eb8c0a63 OUT/floor/floor.csv` (the H100 grid's
#    ceiling per regime, predicted in PREDICTIONS.md);
# 2. the H200 set's CUTLASS picks (convert twins, wide epilogue subtiles) at the configs where the
#    H100 set's pick is under 0.98 (209 of the 411 that differ), A/B'd on the H100 against the H100
#    set's (call1.sh). Then here: bash benchmarks/tuner/merge_picks.sh OUT/cutlass/h200_picks.json
#    OUT/cutlass/ab/picks.duckdb.xz kernels/h100_F32F16F16F32/manifest.json; the grid (call2.sh,
#    BUDGET=500 then BUDGET=250 carrying .carry/grid.duckdb.xz); bundle_grid.sh GRID h100
#    eb8c0a6389df4160b619d7e1d03ae265 OUT_DIR.
# Carried: .whl, .carry (device_carry.sh lib); device_trim.sh out first (the tree is over 64 MiB).
set -u
S=benchmarks/tuner/h100-2026-12-07-s37
mkdir -p "$OUT/floor" "$OUT/cutlass"
OUT=$OUT/floor MOVEMENT_FLOOR_TILED=bulk_ bash benchmarks/tuner/movement_floor/run.sh 90 \
  benchmarks/tuner/movement_floor/configs_h100.txt
OUT=$OUT/cutlass BELOW=0.98 FAMILIES=cutlass_sm90 AB_S=${AB_S:-420} bash $S/call1.sh
