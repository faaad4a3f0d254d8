#!/usr/bin/env bash
# Session 36, call 2 (nvidia-h200, one GPU; issue 15), planned in session 35: the search of the 81
# mid-size configs that lose > 3% in grid 1d2e446b (M x N >= 128K, K <= 1024, picks of CUTLASS and
# the wgmma family; wide_configs.txt) with the wgmma family's new wide tiles (64x192, 128x192,
# 64x96 and 128x96 K-major: the tiles nvjet runs there, one wave), A/B against the set's picks,
# merge (search_ab_merge.sh). Library: HEAD's (b704c710), or the spread library if call 1 landed it,
# as .carry/tunerlib.tar.gz (device_carry.sh lib takes the newest build in /tmp/tb/lib, the spread
# one after next_call1.sh's prep: for HEAD's, `tar czf .carry/tunerlib.tar.gz -C /tmp/tb
# lib/libl2x_tuner-b704c710*`). Carried: .whl, .carry.
set -u
top=$OUT
OUT=$top bash benchmarks/tuner/search_ab_merge.sh benchmarks/tuner/h200-2026-11-29-s35/wide_configs.txt \
  "--limit 48" 200 150 kernels/h200_F32F16F16F32
ls -la "$top"
