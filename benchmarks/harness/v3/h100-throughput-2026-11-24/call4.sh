#!/usr/bin/env bash
# Session 15, call 4: tests/gpu/test_harness.py on the changed harness (held CUPTI replays for long
# calls, per-implementation isolated-call holds, server gaps counted from the GPU's idle start),
# then the 20 validation configs offline (timing-mismatch flags) into grid.duckdb, then the TMA
# streaming probe at 512x512x12288 (benchmarks/tuner/tma_stream; binary carried).
set -uo pipefail
export OUT=${OUT:-/tmp/out}
VAL=$(grep -v '^#' benchmarks/harness/v3/configs.txt | tr -s ' \n' ',' | sed 's/^,//; s/,$//')
TESTS=harness TEST_TIMEOUT=${TEST_TIMEOUT:-420} GRID="--mnk $VAL" BUDGET=120 \
  bash benchmarks/harness/v3/run_device.sh tests grid
mkdir -p "$OUT/tma" && cd benchmarks/tuner/tma_stream && \
  timeout 120 ./tma_stream 512 512 12288 >"$OUT/tma/stream_512x512x12288.csv" 2>"$OUT/tma/stream.err"
echo "probe: exit $?"; cat "$OUT/tma/stream_512x512x12288.csv" | cut -c1-150
cd "$OUT" && tar cf tma.tar tma && rm -rf tma
