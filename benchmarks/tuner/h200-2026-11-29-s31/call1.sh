#!/usr/bin/env bash
# Session 31, call 1 (was s30/next_call1.sh) (nvidia-h200, one GPU; issue 15): the bulk-fed tiny kernels (library 7e5d9f92
# or newer, built here: `python -m cuda_l2_explorer.tuner.build --out /tmp/tb`, then
# `bash benchmarks/device_carry.sh lib`):
# 1. tests/gpu/test_tuner_own.py whole (the bulk kernels, and the direct kernels refactored after
#    session 30's call 5);
# 2. a search (48 candidates a shape; the tiny family's three groups swept whole) of the tiny and
#    small-K configs with K <= 512, worst first (next_call1_configs.txt), then the A/B of the
#    changed picks against the H200 set, old/new/old/new (search_then_ab.sh);
# 3. merge_picks.sh takes the picks > 1% faster into a copy of the manifest (merged_manifest.json:
#    the grid that confirms them is the next calls, with session 30's call 3 merges).
# Carried: .whl, .carry/{duckdb-site.tar.xz,cutlass-4.2.0.tar.gz,tunerlib.tar.gz}.
set -u
D=benchmarks/tuner/h200-2026-11-28-s30
SET=kernels/h200_F32F16F16F32
top=$OUT
mkdir -p "$top/setup"
OUT=$top/setup bash benchmarks/harness/v3/run_device.sh >/dev/null  # install, unpack the library
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
lib=$(ls -t /tmp/tb/lib/*.so | head -1)
echo "library $lib"
CUDA_L2_EXPLORER_TUNER_LIB=$lib timeout 200 python3 -m pytest -q -rfE -p no:cacheprovider \
  tests/gpu/test_tuner_own.py >"$top/gpu_tests.log" 2>&1
echo "gpu tests: exit $? $(tail -1 "$top/gpu_tests.log")"
OUT=$top/s CURRENT_MANIFEST=$SET/manifest.json \
  bash benchmarks/tuner/search_then_ab.sh $D/next_call1_configs.txt "--limit 48" 200 $((545 - SECONDS)) >"$top/s.log" 2>&1
tail -8 "$top/s.log"
tuned=$(find "$top/s" -path '*tuned/manifest.json' | head -1)
if [ -f "$top/s/ab/picks.duckdb" ] && [ -n "$tuned" ]; then
  bash benchmarks/tuner/merge_picks.sh "$tuned" "$top/s/ab/picks.duckdb" $SET/manifest.json >"$top/merge.txt" 2>&1
  echo "merge: exit $? $(tail -1 "$top/merge.txt" | head -c 300)"
  cp $SET/manifest.json "$top/merged_manifest.json"
  xz -T8 "$top/s/ab/picks.duckdb"
fi
cd "$top" && tar cf all.tar --exclude=all.tar . && find . -mindepth 1 -not -name all.tar -delete && ls -la
