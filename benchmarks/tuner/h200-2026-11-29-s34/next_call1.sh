#!/usr/bin/env bash
# Session 35, call 1 (nvidia-h200, one GPU; issue 15), planned in session 34: library ba07bab0 or newer
# (`python -m cuda_l2_explorer.tuner.build --out /tmp/tb --jobs 2`, `bash benchmarks/device_carry.sh lib`;
# the previous library, 5cb65fc4 = commit d68a583, as .carry/oldlib.tar.gz:
# `tar czf .carry/oldlib.tar.gz -C /tmp/tb lib/libl2x_tuner-5cb65fc46aa5ae6d9468.so`):
# 1. lib_checks.sh: tests/gpu/test_tuner_own.py on the new library (the 16x32 four-box kernels with K
#    over eight warp groups, tinyt_16x32x{512,1024,2048}_w1x1x8_c4, first run) and
#    tiny_floor/bulk_bisect.cu at session 33's next_bisect_configs.txt (K = 128-1024) with the eight-
#    and four-group kernels side by side, new and old library;
# 2. the search of the 85 tiny configs where the 16x32 four-box kernels compete (session 33's 64 at
#    K = 256-1024 and session 34's 21 at K = 2048; next_call1_configs.txt), ~1.6 s a config; its A/B
#    against the H200 set and the merge into a copy (search_ab_merge.sh).
# Carried: .whl, .carry/{duckdb-site.tar.xz,cutlass-4.2.0.tar.gz,tunerlib.tar.gz,oldlib.tar.gz}.
set -u
top=$OUT
S=benchmarks/tuner/h200-2026-11-29-s34
BISECT_CONFIGS=benchmarks/tuner/h200-2026-11-29-s33/next_bisect_configs.txt bash benchmarks/tuner/lib_checks.sh \
  tinyt_16x32x512_w1x1x4_c4_bk,tinyt_16x32x512_w1x1x8_c4_bk,tinyt_16x32x1024_w1x1x4_c4_bk,tinyt_16x32x1024_w1x1x8_c4_bk,tinyt_16x32x2048_w1x1x4_c4_bk,tinyt_16x32x2048_w1x1x8_c4_bk \
  "$top/checks.tar"
OUT=$top bash benchmarks/tuner/search_ab_merge.sh $S/next_call1_configs.txt \
  "--limit 48" 170 $((540 - 230 - SECONDS)) kernels/h200_F32F16F16F32
ls -la "$top"
