#!/usr/bin/env bash
# Session 37, call 1 (nvidia-h200, one GPU; issue 15), planned in session 36: the mid band's ceiling.
# movement_floor with its new stream_TMxTN_sS rows (the wgmma family's pipeline without its MMAs:
# 64-k tensor-copy boxes through a ring of stages, one wave or more of TM x TN tiles, K split 1 to 16
# ways with the reduction left out) on the 626 configs that are not compute-bound on an H200,
# beside cuBLAS in the same rotation. Then, here: python benchmarks/tuner/movement_floor/ceilings.py
# OUT/floor.csv db/bundled/measurements.parquet ae6434a8 (its second table: the ceilings by the
# fastest tiled movement, per regime and per K of the tiny regime), grid_bound.py and
# pick_vs_movement.py (movement_floor/README.md). Carried: nothing (nvcc and cuBLAS are on the
# machine).
bash benchmarks/tuner/movement_floor/run.sh 500
