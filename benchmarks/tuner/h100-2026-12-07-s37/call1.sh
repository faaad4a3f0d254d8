#!/usr/bin/env bash
# Session 37, call 1 (nvidia-h100-x1, the first H100 since session 24; issue 15): the H200 set's
# picks of our two families (the tiny family's tensor-, register- and bulk-fed kernels and the
# wgmma family's wide and K = 2048 tiles, searched on H200s in sessions 25-36) where they differ
# from the H100 set's, A/B'd on the H100 against the H100 set's picks, old/new/old/new (harness 3:
# graph replay, cold L2). Library: HEAD's (spread store applied). FAMILIES picks other families
# (FAMILIES=cutlass_sm90 BELOW=0.95: the H200 set's CUTLASS picks, convert twins and wide epilogue
# subtiles, where the H100 set's pick is under 0.95; select_picks.py; this session's fourth call got
# no machine, next_h100_call1.sh runs it with BELOW=0.98; PICKS=FILE A/Bs a manifest's picks as
# given). Then here:
#   bash benchmarks/tuner/merge_picks.sh OUT/h200_picks.json OUT/ab/picks.duckdb.xz kernels/h100_F32F16F16F32/manifest.json
# Carried: .whl, .carry (device_carry.sh lib).
set -u
S=benchmarks/tuner/h100-2026-12-07-s37
mkdir -p /tmp/setup && OUT=/tmp/setup bash benchmarks/harness/v3/run_device.sh >/dev/null  # the wheel, the library
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=index,name,driver_version,power.limit,clocks.max.sm --format=csv >"$OUT/gpu.csv"
if [ -n "${PICKS:-}" ]; then  # given picks (session 38: an H100 search's, band_picks_h100.json)
  cp "$PICKS" "$OUT/h200_picks.json"
else
  python3 $S/select_picks.py kernels/h200_F32F16F16F32/manifest.json kernels/h100_F32F16F16F32/manifest.json \
    ${FAMILIES:-sm90_mma_tiny sm90_wgmma_splitk} >"$OUT/h200_picks.json"
fi
CURRENT_MANIFEST=kernels/h100_F32F16F16F32/manifest.json bash benchmarks/tuner/ab_picks.sh \
  "$OUT/h200_picks.json" "$(ls -t /tmp/tb/lib/*.so | head -1)" "$OUT/ab" ${AB_S:-460}
python3 benchmarks/tuner/h100-2026-11-24-s12/picks_ab.py "$OUT/ab/picks.duckdb" >"$OUT/ab.txt" 2>&1
tail -1 "$OUT/ab.txt"
xz -T8 "$OUT/ab/picks.duckdb" && rm -rf "$OUT/ab/picks"
ls -la "$OUT" "$OUT/ab"
