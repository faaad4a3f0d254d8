#!/usr/bin/env bash
# Session 37, call 2 (nvidia-h200, one GPU; issue 15), planned in session 36: the search of the 129
# mid-size configs of the tiny regime that CUTLASS or the wgmma family serve at under 1.0 of the
# best baseline in grid ae6434a8 (M x N >= 2^19; short_k_configs.txt), with the wgmma family's new
# four-stage 64x64 and 64x128 tiles (two CTAs an SM) beside every other kernel,
# A/B against the set's picks, merge (search_ab_merge.sh). Library: HEAD's (with the spread store
# if session 37 applied h200-2026-11-29-s36/spread_store.patch first), as .carry/tunerlib.tar.gz
# (device_carry.sh lib). Carried: .whl, .carry.
set -u
top=$OUT
OUT=$top bash benchmarks/tuner/search_ab_merge.sh benchmarks/tuner/h200-2026-11-29-s36/short_k_configs.txt \
  "--limit 48" 200 150 kernels/h200_F32F16F16F32
ls -la "$top"
