#!/usr/bin/env bash
# Session 33, call 7 (nvidia-h200, one GPU; issue 15): call 6 found a 32x32 tile's swizzled boxes
# landing 0.5-0.7 us after bulk copies of the same bytes at K = 1024 (move_swz 3.01-3.12 us against
# move_t128 2.31-2.59): 32 tensor copies and 16 barriers against 8 bulk copies and one. The probe's
# new rows copy 4 boxes, or all of K, at once through a 3D map of 64-k slabs (move_swz3_*,
# mma_swz3_*): call6.sh again (same configs, cuBLAS beside), fewer library kernels. Not run in
# session 33 (too little device time left); session 34's next_call1.sh runs the same probe rows.
# Carried: .whl, .carry/{duckdb-site.tar.xz,cutlass-4.2.0.tar.gz,tunerlib.tar.gz}.
NAMES=tinyt_16x32x1024_w1x1x4_bk,tinyt_32x32x1024_w2x1x4_bk,tinyt_16x32x512_w1x1x4_bk CSV=bisect_slabs.csv \
  exec bash benchmarks/tuner/h200-2026-11-29-s33/call6.sh
