#!/usr/bin/env bash
# Session 34, call 7 (nvidia-h200, one GPU; issue 15), in the session's last 264 s of device time:
# next_call1.sh's first step alone (lib_checks.sh): tests/gpu/test_tuner_own.py on library ba07bab0
# (the eight-group kernels' first run) and the probe at K = 128-1024 with the eight- and four-group
# 16x32 four-box kernels side by side, new library (ba07bab0) and old (5cb65fc4).
# Carried: .whl, .carry/{duckdb-site.tar.xz,cutlass-4.2.0.tar.gz,tunerlib.tar.gz,oldlib.tar.gz}.
set -u
BISECT_CONFIGS=benchmarks/tuner/h200-2026-11-29-s33/next_bisect_configs.txt bash benchmarks/tuner/lib_checks.sh \
  tinyt_16x32x512_w1x1x4_c4_bk,tinyt_16x32x512_w1x1x8_c4_bk,tinyt_16x32x1024_w1x1x4_c4_bk,tinyt_16x32x1024_w1x1x8_c4_bk,tinyt_16x32x2048_w1x1x4_c4_bk,tinyt_16x32x2048_w1x1x8_c4_bk \
  "$OUT/checks.tar"
