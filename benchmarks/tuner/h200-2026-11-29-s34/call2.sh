#!/usr/bin/env bash
# Session 34, call 2 (nvidia-h200, one GPU; issue 15): library 5cb65fc4 (752a70d4 and one kernel more,
# tinyt_16x32x2048_w1x1x4_c4_bk: the 16x32 split tile with four-box copies at K = 2048).
# 1. lib_checks.sh: tests/gpu/test_tuner_own.py on 5cb65fc4 (the new kernel's first run, the new
#    48x200x1984 shape), and the probe at call2_bisect_configs.txt (K <= 1024) with the c4 kernels
#    of 5cb65fc4 ("new") beside 752a70d4's ("old", .carry/oldlib.tar.gz): the same code, the same times.
# 2. The search of the 21 tiny configs at K = 2048 with M x N <= 128K (call2_configs.txt), A/B
#    against the H200 set as call 1 left it (call 1's and session 33 call 5's merges combined into
#    kernels/h200_F32F16F16F32/manifest.json), merge into a copy (search_ab_merge.sh).
# Carried: .whl, .carry/{duckdb-site.tar.xz,cutlass-4.2.0.tar.gz,tunerlib.tar.gz,oldlib.tar.gz}.
set -u
top=$OUT
S=benchmarks/tuner/h200-2026-11-29-s34
BISECT_CONFIGS=$S/call2_bisect_configs.txt bash benchmarks/tuner/lib_checks.sh \
  tinyt_16x32x1024_w1x1x4_c4_bk,tinyt_16x32x512_w1x1x4_c4_bk,tinyt_16x32x512_w1x1x4_p4_bk \
  "$top/checks.tar"
OUT=$top bash benchmarks/tuner/search_ab_merge.sh $S/call2_configs.txt \
  "--limit 48" 60 $((330 - 90 - SECONDS)) kernels/h200_F32F16F16F32
ls -la "$top"
