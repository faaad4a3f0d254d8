#!/usr/bin/env bash
# Session 31, call 2 (nvidia-h200, one GPU; issue 15). Call 1's search came back only as its store
# (call1/tune.duckdb.xz, taken from the warm machine's temporary copy): its whole result, one
# 20.8 MB tar, exceeded the 16 MiB a file may have, so the A/B it ran was lost. This call:
# 1. the A/B again: the search's 200 changed picks against the H200 set, old/new/old/new
#    (ab_picks.sh), and merge_picks.sh into a copy of the manifest (merged_manifest.json);
# 2. Nsight Compute on the bulk-fed kernels beside the picks at 512x512x128, 256^3, 128^3
#    (ncu_bulk.json) and the bulk movement probe (bulk_tile_move) at 512x512x128: why a bulk kernel
#    sits ~1.5 us above its own movement.
# Every file returned is checked against the 16 MiB limit; no single tar of everything.
# Carried: .whl, .carry/{duckdb-site.tar.xz,cutlass-4.2.0.tar.gz,tunerlib.tar.gz,tune_s31c1.duckdb.xz}.
set -u
S=benchmarks/tuner/h200-2026-11-29-s31
F=benchmarks/tuner/movement_floor
SET=kernels/h200_F32F16F16F32
top=$OUT
nvidia-smi --query-gpu=index,name,driver_version,power.limit,clocks.max.sm --format=csv >"$top/gpu.csv"
mkdir -p "$top/setup"
OUT=$top/setup bash benchmarks/harness/v3/run_device.sh >/dev/null  # install, unpack the library
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
lib=$(ls -t /tmp/tb/lib/*.so | head -1)
nvcc -O3 -std=c++17 -arch=sm_90a -o /tmp/movement_floor $F/movement_floor.cu -lcublas 2>"$top/floor_build.log" &
store=/tmp/tune.duckdb
xz -dc .carry/tune_s31c1.duckdb.xz >$store
CURRENT_MANIFEST=$SET/manifest.json bash benchmarks/tuner/ab_picks.sh $store "$lib" /tmp/ab 280 >"$top/ab.log" 2>&1
tail -6 "$top/ab.log"
if [ -f /tmp/ab/picks.duckdb ]; then
  bash benchmarks/tuner/merge_picks.sh $store /tmp/ab/picks.duckdb $SET/manifest.json >"$top/merge.txt" 2>&1
  echo "merge: exit $? $(tail -1 "$top/merge.txt" | head -c 300)"
  cp $SET/manifest.json "$top/merged_manifest.json"
  xz -T8 -c /tmp/ab/picks.duckdb >"$top/picks.duckdb.xz"
  cat /tmp/ab/picks.log /tmp/ab/device.txt >>"$top/ab.log" 2>/dev/null
fi
wait
# (the metric list: ran inline, the same, now benchmarks/tuner/ncu_metrics.sh)
metrics=$(bash benchmarks/tuner/ncu_metrics.sh "$top/ncu.log")
mkdir -p /tmp/ncu
OUT=/tmp/ncu SET=$SET NCU_MANIFEST=$S/ncu_bulk.json NCU_FAMILY=$S/ncu_bulk_configs.txt NCU_CALLS=1 \
  NCU_SECTIONS="--section LaunchStats --section WarpStateStats --metrics $metrics" \
  timeout 200 bash benchmarks/harness/v3/run_device.sh ncu-family >>"$top/ncu.log" 2>&1
tail -3 "$top/ncu.log"
cp /tmp/ncu/ncu_family.csv /tmp/ncu/ncu_family_order.json "$top/" 2>/dev/null
echo "512 512 128" >/tmp/one.txt
timeout 60 ncu --clock-control none --cache-control all --section LaunchStats --section WarpStateStats \
  --metrics "$metrics" -k regex:bulk_tile_move -c 3 --csv --page details --print-units base \
  --log-file "$top/ncu_bulk_move.csv" /tmp/movement_floor /tmp/one.txt 1 >/dev/null 2>>"$top/ncu.log"
for f in "$top"/*; do
  [ -f "$f" ] && [ "$(stat -c %s "$f")" -gt 15000000 ] && echo "dropped $f ($(stat -c %s "$f") B)" && rm -f "$f"
done
rm -rf "$top/setup"
ls -la "$top"
