#!/usr/bin/env bash
# Session 35, call 1 (nvidia-h200, one GPU; issue 15) = session 34's next_call1.sh, planned there: library bc2d1a76
# (`python -m cuda_l2_explorer.tuner.build --out /tmp/tb --jobs 2`, `bash benchmarks/device_carry.sh lib`;
# the previous library, 5cb65fc4 = commit d68a583, as .carry/oldlib.tar.gz:
# `tar czf .carry/oldlib.tar.gz -C /tmp/tb lib/libl2x_tuner-5cb65fc46aa5ae6d9468.so`):
# 1. lib_checks.sh: tests/gpu/test_tuner_own.py on the new library and the probe at K = 128-1024
#    (session 33's next_bisect_configs.txt) with the 16x32 four-box kernels, new and old library;
# 2. the search of the 21 tiny configs at K = 2048 with M x N <= 128K (call2_configs.txt), where
#    tinyt_16x32x2048_w1x1x8_c4 (K over eight warp groups; at K <= 1024 level or slower than four,
#    session 34's call 7) meets the four-group kernel; A/B, merge (search_ab_merge.sh);
# 3. ncu with the source counters of the set's picks against nvjet at three mid-size tiny configs
#    that lose 7-13% in grid 1d2e446b (128x12288x256 0.874, a CUTLASS pick; 64x2048x2048 0.913 and
#    256x1024x8192 0.926, wgsk picks), before any kernel work;
# 4. one CTA's timeline in the one-pass kernels (tiny_floor/timeline.py on a timeline build, carried as
#    .carry/timeline.tar.gz: `python -m cuda_l2_explorer.tuner.build --catalog tiny --only "$TL_NAMES"
#    --timeline --out /tmp/tl && tar czf .carry/timeline.tar.gz -C /tmp/tl lib`, TL_NAMES as below):
#    where the ~1.1 us after a four-box kernel's copies land goes.
# Carried: .whl, .carry/{duckdb-site.tar.xz,cutlass-4.2.0.tar.gz,tunerlib.tar.gz,oldlib.tar.gz,timeline.tar.gz}.
set -u
top=$OUT
S=benchmarks/tuner/h200-2026-11-29-s34
BISECT_CONFIGS=benchmarks/tuner/h200-2026-11-29-s33/next_bisect_configs.txt bash benchmarks/tuner/lib_checks.sh \
  tinyt_16x32x1024_w1x1x4_c4_bk,tinyt_16x32x2048_w1x1x4_c4_bk,tinyt_16x32x2048_w1x1x8_c4_bk "$top/checks.tar"
OUT=$top bash benchmarks/tuner/search_ab_merge.sh $S/call2_configs.txt \
  "--limit 48" 60 150 kernels/h200_F32F16F16F32
mkdir -p "$top/ncu"
OUT=$top/ncu bash benchmarks/tuner/ncu_source.sh $S/next_ncu_midsize.json $S/next_ncu_midsize_configs.txt
tar cf "$top/ncu.tar" -C "$top" ncu && rm -rf "$top/ncu"  # at most 8 files come back
TL_NAMES=tinyt_16x32x1024_w1x1x4_c4_bk,tinyt_16x32x1024_w1x1x4_bk,tinyt_32x32x512_w2x1_bk,tinyb_32x32x512_w2x1_bk,tinyt_16x32x2048_w1x1x4_c4_bk,tinyt_16x32x2048_w1x1x8_c4_bk
mkdir -p /tmp/tl && tar xzf .carry/timeline.tar.gz -C /tmp/tl
PYTHONPATH=/tmp/site timeout 120 python3 benchmarks/tuner/tiny_floor/timeline.py "$(ls /tmp/tl/lib/*.so | head -1)" \
  $S/next_timeline_configs.txt "$TL_NAMES" >"$top/timeline.csv" 2>&1
echo "timeline: exit $?"
ls -la "$top"
