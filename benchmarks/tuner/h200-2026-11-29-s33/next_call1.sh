#!/usr/bin/env bash
# Session 34, call 1 (nvidia-h200, one GPU; issue 15), planned in session 33: library 752a70d4 or newer
# (`python -m cuda_l2_explorer.tuner.build --out /tmp/tb --jobs 2`, `bash benchmarks/device_carry.sh lib`;
# the previous library, b2ae9ede = commit 1ae2c4c, as .carry/oldlib.tar.gz:
# `tar czf .carry/oldlib.tar.gz -C /tmp/tb lib/libl2x_tuner-b2ae9edeeaa0766434b7.so`):
# 1. lib_checks.sh: tests/gpu/test_tuner_own.py on the new library (the 11 tensor kernels with four
#    64-k boxes a copy through a 3D map, tinyt_*_c4, and their 10 pitched twins, tinyt_*_p4, first
#    run; the new 200x264x192 shape) and
#    tiny_floor/bulk_bisect.cu at next_bisect_configs.txt (K = 128-1024) with the probe's slabbed rows
#    (move_swz3_*, mma_swz3_*: session 33's call7.sh, never run) and pitched rows (move_pitch_*,
#    mma_pitch_*: increasing strides, odd row pitch) beside the c4 and p4 kernels and their one-box twins,
#    new and old library;
# 2. the search of the 64 tiny configs with K = 256-1024 (next_call1_configs.txt, smallest M x N
#    first; where the tensor kernels took session 33's 49 picks), ~1.6 s a config; its A/B against the
#    H200 set and the merge into a copy (search_ab_merge.sh).
# Carried: .whl, .carry/{duckdb-site.tar.xz,cutlass-4.2.0.tar.gz,tunerlib.tar.gz,oldlib.tar.gz}.
set -u
top=$OUT
S=benchmarks/tuner/h200-2026-11-29-s33
BISECT_CONFIGS=$S/next_bisect_configs.txt bash benchmarks/tuner/lib_checks.sh \
  tinyt_16x32x1024_w1x1x4_bk,tinyt_16x32x1024_w1x1x4_c4_bk,tinyt_16x32x1024_w1x1x4_p4_bk,tinyt_16x32x512_w1x1x4_bk,tinyt_16x32x512_w1x1x4_c4_bk,tinyt_16x32x512_w1x1x4_p4_bk,tinyt_32x32x512_w2x1_bk,tinyt_32x32x512_w2x1_c4_bk,tinyt_32x32x512_w2x1_p4_bk \
  "$top/checks.tar"
OUT=$top bash benchmarks/tuner/search_ab_merge.sh $S/next_call1_configs.txt \
  "--limit 48" 150 $((540 - 200 - SECONDS)) kernels/h200_F32F16F16F32
ls -la "$top"
