#!/usr/bin/env bash
# Session 32, call 5 (nvidia-h200, one GPU; issue 15), on the 243 s of device time left: the GPU
# tests of library 7c8166b2 (the five tensor kernels with K split over warp groups, their first run)
# and bulk_bisect.cu's new rows (move_swz, mma_swzpb_w2/k2/k4) beside the library's tinyt kernels,
# new (7c8166b2) and old (21343721, .carry/oldlib.tar.gz): lib_checks.sh.
# Carried: .whl, .carry/{duckdb-site.tar.xz,cutlass-4.2.0.tar.gz,tunerlib.tar.gz,oldlib.tar.gz}.
set -u
bash benchmarks/tuner/lib_checks.sh \
  tinyt_32x32x512_w2x1_bk,tinyt_32x32x512_w2x1x2_bk,tinyt_32x32x512_w2x1x4_bk,tinyt_16x32x512_w1x1x2_bk,tinyt_32x64x512_w2x2x2_bk \
  "$OUT/checks.tar"
