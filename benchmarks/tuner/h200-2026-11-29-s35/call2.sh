#!/usr/bin/env bash
# Session 35, call 2 (nvidia-h200, one GPU; issue 15): the tensor-fed kernels' copies issued after one
# barrier fence (init_landings) with their maps prefetched, library 204aab62 against bc2d1a76, and
# the multicast landing probe. Prep: `python -m cuda_l2_explorer.tuner.build --out /tmp/tb --jobs 2`,
# `bash benchmarks/device_carry.sh lib`; the old library as .carry/oldlib.tar.gz (bc2d1a76); the two
# timeline builds (--only $TL_NAMES --timeline) as .carry/timeline.tar.gz (old) and
# .carry/timeline_new.tar.gz (new). Carried: .whl, .carry.
# 1. lib_checks.sh: tests/gpu/test_tuner_own.py on the new library; the probe at session 33's
#    K = 128-1024 configs with four tensor-fed picks' kernels, new and old library, and the new
#    move_swz3_4_mc{2,4} / mma_swz3_k4_4_mc{2,4} rows (B multicast over 2 or 4 CTAs along M);
# 2. the two timelines (old and new build) at session 34's timeline configs;
# 3. lib_ab.sh: the set's 86 tensor- and bulk-fed picks, old library / new / old / new.
# (Library 204aab62 is commit fd38dfc's tuner/csrc/tiny_gemm.cuh, reverted after this call and call 3.)
set -u
top=$OUT
S=benchmarks/tuner/h200-2026-11-29-s35
BISECT_CONFIGS=benchmarks/tuner/h200-2026-11-29-s33/next_bisect_configs.txt bash benchmarks/tuner/lib_checks.sh \
  tinyt_16x32x1024_w1x1x4_c4_bk,tinyt_32x32x512_w2x1_bk,tinyt_16x32x512_w1x1_bk,tinyt_16x32x1024_w1x1x4_p4_bk "$top/checks.tar"
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
TL_NAMES=tinyt_16x32x1024_w1x1x4_c4_bk,tinyt_16x32x1024_w1x1x4_bk,tinyt_32x32x512_w2x1_bk,tinyb_32x32x512_w2x1_bk,tinyt_16x32x2048_w1x1x4_c4_bk,tinyt_16x32x2048_w1x1x8_c4_bk
for which in old new; do
  tarball=.carry/timeline.tar.gz && [ $which = new ] && tarball=.carry/timeline_new.tar.gz
  mkdir -p /tmp/tl_$which && tar xzf $tarball -C /tmp/tl_$which
  timeout 120 python3 benchmarks/tuner/tiny_floor/timeline.py "$(ls /tmp/tl_$which/lib/*.so | head -1)" \
    benchmarks/tuner/h200-2026-11-29-s34/next_timeline_configs.txt "$TL_NAMES" >"$top/timeline_$which.csv" 2>&1
  echo "timeline $which: exit $?"
done
new=$(ls -t /tmp/tb/lib/*.so | head -1) old=$(ls /tmp/old/lib/*.so | head -1)
bash benchmarks/tuner/lib_ab.sh "$(cat $S/tensor_pick_configs.txt)" "$old" "$new" kernels/h200_F32F16F16F32 /tmp/lab 200
xz -T8 -c /tmp/lab/picks.duckdb >"$top/lib_ab.duckdb.xz"
cat /tmp/lab/device.txt /tmp/lab/picks.log >"$top/lib_ab.log" 2>/dev/null
ls -la "$top"
