#!/usr/bin/env bash
# Session 12, device call 2: re-search, with library fc9d1115 (four more CUTLASS kernels) and every
# candidate measured (tune --limit 1000: ~110 a shape), the 301 small-K and large configs of grid
# 425ac0fc below 1.0 over the best baseline, worst first; keep-faster into the set's manifest.
set -u
D=benchmarks/tuner/h100-2026-11-24-s12
mkdir -p /tmp/tb-fc9d && [ -f /tmp/tb-fc9d/lib/libl2x_tuner-fc9d11150d4bb33229ee.so ] || tar xzf .carry/tunerlib-fc9d1115.tar.gz -C /tmp/tb-fc9d
mkdir -p "$OUT/r/tuned"
cp kernels/h100_F32F16F16F32/manifest.json "$OUT/r/tuned/manifest.json"
OUT=$OUT/r TUNE_LIB=/tmp/tb-fc9d/lib/libl2x_tuner-fc9d11150d4bb33229ee.so TUNE_FILE=$D/retune_configs.txt \
  TUNE_ARGS="--limit 1000 --no-measure --keep-faster" TUNE_LIMIT=${TUNE_LIMIT:-540} bash benchmarks/harness/v3/run_device.sh retune
cp "$OUT/r/tuned/manifest.json" "$OUT/manifest.json"; cp "$OUT/manifest.json" /tmp/s12-manifest.json
tar czf "$OUT/retune.tar.gz" -C "$OUT" r && rm -rf "$OUT/r"
