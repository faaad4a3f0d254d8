#!/usr/bin/env bash
# Session 30, call 3 (nvidia-h200, one GPU; issue 15): the H200 set's picks that came from an H100
# search and lose to the best baseline on the H200 (grid dd023a82: under 0.98; 80 tiny, 24 skinny,
# worst first in call3_configs.txt), searched on the H200 with today's library (48 candidates a
# shape, the tiny family's groups swept whole), then the changed picks A/B against the set's,
# old/new/old/new (search_then_ab.sh); merge_picks.sh takes the picks > 1% faster into a copy of
# the manifest (returned as merged_manifest.json: the grid that confirms them is a later call).
# Carried: .whl, .carry/{duckdb-site.tar.xz,cutlass-4.2.0.tar.gz,tunerlib.tar.gz}.
set -u
D=benchmarks/tuner/h200-2026-11-28-s30
SET=kernels/h200_F32F16F16F32
top=$OUT
nvidia-smi --query-gpu=index,name,driver_version,power.limit,clocks.max.sm --format=csv >"$top/gpu.csv"
OUT=$top/s CURRENT_MANIFEST=$SET/manifest.json \
  bash benchmarks/tuner/search_then_ab.sh $D/call3_configs.txt "--limit 48" 200 $((545 - SECONDS)) >"$top/s.log" 2>&1
tail -8 "$top/s.log"
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
tuned=$(find "$top/s" -path '*tuned/manifest.json' | head -1)
if [ -f "$top/s/ab/picks.duckdb" ] && [ -n "$tuned" ]; then
  bash benchmarks/tuner/merge_picks.sh "$tuned" "$top/s/ab/picks.duckdb" $SET/manifest.json >"$top/merge.txt" 2>&1
  echo "merge: exit $? $(tail -1 "$top/merge.txt" | head -c 300)"
  cp $SET/manifest.json "$top/merged_manifest.json"
  xz -T8 "$top/s/ab/picks.duckdb"
fi
cd "$top" && tar cf all.tar --exclude=all.tar . && find . -mindepth 1 -not -name all.tar -delete && ls -la
