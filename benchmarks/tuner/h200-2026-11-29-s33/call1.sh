#!/usr/bin/env bash
# Session 33, call 1 (was session 32's next_call1.sh) (nvidia-h200, one GPU; issue 15), planned in session 32: library b2ae9ede or
# newer (`python -m cuda_l2_explorer.tuner.build --out /tmp/tb --jobs 2`, `bash benchmarks/device_carry.sh lib`;
# the previous library, 21343721 = commit 04f4a5d, as .carry/oldlib.tar.gz:
# `tar czf .carry/oldlib.tar.gz -C /tmp/tb lib/libl2x_tuner-21343721d95179c1a186.so`):
# 1. lib_checks.sh: tests/gpu/test_tuner_own.py on the new library (the five tensor kernels with K
#    split over warp groups, tinyt_*x2/x4, first run in session 32's call 5) and bulk_bisect.cu with its new rows
#    (move_swz: the swizzled boxes' landing alone; mma_swzpb_w2/k2/k4: a barrier a box, K over 1, 2,
#    4 warp pairs) beside the library's tinyt kernels, new and old;
# 2. the search of the 102 tiny configs with K = 128-1024 (next_call1_configs.txt, smallest M x N
#    first: where few tiles leave SMs to a K split; the new tile_k = 1024 kernels), ~2.4 s a config at
#    these shapes (likely their thousands of rotation sets a graph; session 32's call 4), so 250 s reach
#    ~100; its A/B against the H200 set and the merge into a copy (search_ab_merge.sh).
# Carried: .whl, .carry/{duckdb-site.tar.xz,cutlass-4.2.0.tar.gz,tunerlib.tar.gz,oldlib.tar.gz}.
set -u
top=$OUT
bash benchmarks/tuner/lib_checks.sh \
  tinyt_32x32x512_w2x1_bk,tinyt_32x32x512_w2x1x2_bk,tinyt_32x32x512_w2x1x4_bk,tinyt_16x32x512_w1x1x2_bk,tinyt_32x64x512_w2x2x2_bk \
  "$top/checks.tar"
OUT=$top bash benchmarks/tuner/search_ab_merge.sh benchmarks/tuner/h200-2026-11-29-s32/next_call1_configs.txt \
  "--limit 48" 250 $((560 - 280 - SECONDS)) kernels/h200_F32F16F16F32
ls -la "$top"
