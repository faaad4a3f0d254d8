#!/usr/bin/env bash
# Session 10, device call 9: the 392 tiny configs re-searched with the 32-bit split range
# (keep-faster into a copy of the set's manifest): the picks for the next grid, not shipped (the
# bundled grid cec6e3f4 measured the set's current picks).
set -u
D=benchmarks/tuner/h100-2026-11-24-s10-tiny
mkdir -p "$OUT/tuned"
cp kernels/h100_F32F16F16F32/manifest.json "$OUT/tuned/manifest.json"
TUNE_FILE=$D/configs.txt TUNE_ARGS="--no-measure --keep-faster" TUNE_LIMIT=240 \
  bash benchmarks/harness/v3/run_device.sh retune
cp "$OUT/tuned/manifest.json" "$OUT/manifest.json"
