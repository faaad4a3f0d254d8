#!/usr/bin/env bash
# Session 32, calls 2 and 3 (nvidia-h200, one GPU; issue 15): the H200 set's grid with the three
# A/B merges combined (kernels/h200_F32F16F16F32/manifest.json = combine_merges.py over session 30's
# call 3, session 31's call 2 and this session's call 1: 80 picks changed, 21 of them tensor-fed
# tiny kernels) on library 053c5496 (panel_gemm two blocks an iteration), offline, graph-timed,
# cold L2, beside the seven baselines; resumed from .carry/grid.duckdb.xz when carried.
# Before the grid when WITH_CHECKS=1 (call 2): lib_checks.sh (the GPU tests on the new library, the
# bisect of it and the previous one, bb68b600 as .carry/oldlib.tar.gz: the loop change side by side).
# (Since refactored: the checks ran inline, the same commands, now in lib_checks.sh.)
# Carried: .whl, .carry/{duckdb-site.tar.xz,cutlass-4.2.0.tar.gz,tunerlib.tar.gz,oldlib.tar.gz[,grid.duckdb.xz]}.
set -u
top=$OUT
mkdir -p "$top/grid"
if [ "${WITH_CHECKS:-0}" = 1 ]; then
  bash benchmarks/tuner/lib_checks.sh tinyb_32x32x512_w2x1_bk,tinyb_16x32x512_w1x1_bk,tinyb_32x64x512_w2x2_bk,tinyt_32x32x512_w2x1_bk,tinyt_16x32x512_w1x1_bk,tinyt_32x64x512_w2x2_bk \
    "$top/checks.tar"
fi
OUT=$top/grid SET=kernels/h200_F32F16F16F32 BUDGET=${BUDGET:-430} bash benchmarks/harness/v3/run_device.sh grid
ls -la "$top" "$top/grid"
