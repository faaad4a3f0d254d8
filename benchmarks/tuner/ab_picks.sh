#!/usr/bin/env bash
# A search's changed picks against the set's current ones, benched old, new, old, new in one store
# (harness 3: graph replay, cold L2) beside torch.matmul and three cuBLASLt baselines, on the GPU
# machine (the wheel installed in $PYTHONPATH). The A/B step of the tuner's call scripts since
# session 16 (`h100-2026-11-24-s12/picks_ab.py` makes its table, `h100-2026-11-24-s13/merge_faster.py`
# takes the faster picks into the set).
#   bash benchmarks/tuner/ab_picks.sh TUNE_STORE LIBRARY OUT_DIR SECONDS
# TUNE_STORE: the search's store (.duckdb); OUT_DIR gets picks/{oldpicks,newpicks} (the two sets),
# picks.duckdb, picks.json, picks.log and device.txt; SECONDS: what the four benches may take in all.
set -u
store=$1 lib=$2 out=$3 seconds=$4
mkdir -p "$out"
# CURRENT_MANIFEST: the set whose picks are "old" (default the H100 set; kernels/h200_F32F16F16F32/manifest.json
# on an H200). The two sets' folders are named h100_F32F16F16F32 either way (the bench's GPU is the machine's).
PICKS=$(python3 benchmarks/tuner/h100-2026-11-24-s13/make_picks.py "$store" "${CURRENT_MANIFEST:-kernels/h100_F32F16F16F32/manifest.json}" "$out/picks")
echo "changed picks: $(echo "$PICKS" | tr ',' '\n' | grep -c _)"
. "$(dirname "$0")/ab_benches.sh"
ab_benches "$out" "$seconds" "$PICKS" \
  "${AB_BASELINES:-torch.matmul,cuBLASLt-heuristic-nn,cuBLASLt-heuristic-tn,cuBLASLt-auto-tuning-nn}" \
  "$out/picks/oldpicks/h100_F32F16F16F32" "$lib" "$out/picks/newpicks/h100_F32F16F16F32" "$lib"
