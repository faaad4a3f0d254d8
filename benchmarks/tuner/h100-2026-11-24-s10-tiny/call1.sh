#!/usr/bin/env bash
# Session 10, device call 1 (from the repository root on the GPU machine): the GPU tests of our two
# families after the shared host-side refactor, then a graph-timed re-search (keep-faster into the
# set's manifest) of (a) the 392 tiny configs with the tiny family swept whole, (b) the configs whose
# picks date from the eager-timed search of 2026-11-22 (run b8c5b078), worst first, in what is left of CALL_LIMIT
# seconds.
set -u
D=benchmarks/tuner/h100-2026-11-24-s10-tiny
R=benchmarks/harness/v3/run_device.sh
mkdir -p "$OUT/a/tuned" "$OUT/b/tuned"
cp kernels/h100_F32F16F16F32/manifest.json "$OUT/a/tuned/manifest.json"
OUT=$OUT/a TESTS=tuner_own TUNE_FILE=$D/configs.txt TUNE_ARGS="--no-measure --keep-faster" TUNE_LIMIT=300 \
  bash $R tests retune
cp "$OUT/a/tuned/manifest.json" "$OUT/b/tuned/manifest.json"
OUT=$OUT/b TUNE_FILE=$D/configs_eager_era.txt TUNE_ARGS="--no-measure --keep-faster" TUNE_LIMIT=$(( ${CALL_LIMIT:-570} - SECONDS )) \
  bash $R retune
cp "$OUT/b/tuned/manifest.json" "$OUT/manifest.json"
tar czf "$OUT/call1.tar.gz" -C "$OUT" a b && rm -rf "$OUT/a" "$OUT/b"
