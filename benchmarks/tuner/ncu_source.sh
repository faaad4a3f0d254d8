#!/usr/bin/env bash
# Nsight Compute with the source counters (per-instruction warp-stall samples and the SASS export)
# beside the launch and warp-state sections and a few memory and pipe metrics, for the kernels a
# manifest names at the configs a file lists (run_device.sh's ncu-family; one call a group), on the
# GPU machine from the repository root (session 31's call 3 first):
#   bash benchmarks/tuner/ncu_source.sh NCU_MANIFEST NCU_CONFIGS
# $OUT gets ncu.log, logs.tar, ncu_raw.csv.xz, ncu_sass.csv.xz (files over 15 MB dropped).
set -u
manifest=$1 configs=$2
top=$OUT
metrics=$(bash benchmarks/tuner/ncu_metrics.sh "$top/ncu.log")
mkdir -p /tmp/ncu3
OUT=/tmp/ncu3 SET=${SET:-kernels/h200_F32F16F16F32} NCU_MANIFEST=$manifest NCU_FAMILY=$configs NCU_CALLS=1 NCU_REPORT=1 \
  NCU_SECTIONS="--section LaunchStats --section WarpStateStats --section SourceCounters --metrics $metrics" \
  timeout 300 bash benchmarks/harness/v3/run_device.sh ncu-family >>"$top/ncu.log" 2>&1
tail -4 "$top/ncu.log"
cp /tmp/ncu3/logs.tar /tmp/ncu3/ncu_raw.csv.xz /tmp/ncu3/ncu_sass.csv.xz "$top/" 2>/dev/null
for f in "$top"/*; do
  [ -f "$f" ] && [ "$(stat -c %s "$f")" -gt 15000000 ] && echo "dropped $f ($(stat -c %s "$f") B)" && rm -f "$f"
done
