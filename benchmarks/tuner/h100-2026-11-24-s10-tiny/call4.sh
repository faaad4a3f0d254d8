#!/usr/bin/env bash
# Session 10, device call 4: our families with the staged 16-byte C epilogue (data-parallel path of
# the tiny and wgmma families): their GPU tests and the export tests, then the 392 tiny configs
# re-searched (keep-faster into the set's manifest, which call 1's re-search wrote).
set -u
D=benchmarks/tuner/h100-2026-11-24-s10-tiny
mkdir -p "$OUT/tuned"
cp kernels/h100_F32F16F16F32/manifest.json "$OUT/tuned/manifest.json"
TESTS="tuner_own export_device" TEST_TIMEOUT=240 TUNE_FILE=$D/configs.txt TUNE_ARGS="--no-measure --keep-faster" \
  TUNE_LIMIT=300 bash benchmarks/harness/v3/run_device.sh tests retune savelib
cp "$OUT/tuned/manifest.json" "$OUT/manifest.json"
