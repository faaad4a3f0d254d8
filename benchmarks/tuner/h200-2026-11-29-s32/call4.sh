#!/usr/bin/env bash
# Session 32, call 4 (nvidia-h200, one GPU; issue 15): the tensor-fed tiny kernels with a barrier a
# box (library 21343721: the MMAs of box j run while boxes j+1.. land), on what device time was left:
# 1. tests/gpu/test_tuner_own.py on the new library;
# 2. tiny_floor/bulk_bisect.cu's tinyt rows on the new library and the previous one (053c5496,
#    .carry/oldlib.tar.gz), side by side;
# (1 and 2: lib_checks.sh; they ran inline, the same commands, before it was factored out.)
# 3. a search of the 87 tiny configs with K = 128-512 (call4_configs.txt, smallest M x N first), its
#    A/B against the H200 set (grid 1a40b72f's picks) and the merge (search_ab_merge.sh) into a copy.
# Carried: .whl, .carry/{duckdb-site.tar.xz,cutlass-4.2.0.tar.gz,tunerlib.tar.gz,oldlib.tar.gz}.
set -u
S2=benchmarks/tuner/h200-2026-11-29-s32
top=$OUT
# back even if the search below is cut short
bash benchmarks/tuner/lib_checks.sh tinyt_32x32x512_w2x1_bk,tinyt_16x32x512_w1x1_bk,tinyt_32x64x512_w2x2_bk,tinyt_64x64x512_w4x2_bk \
  "$top/checks.tar"
OUT=$top bash benchmarks/tuner/search_ab_merge.sh $S2/call4_configs.txt "--limit 48" 80 $((360 - 110 - SECONDS)) kernels/h200_F32F16F16F32
ls -la "$top"
