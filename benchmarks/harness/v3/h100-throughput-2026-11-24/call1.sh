#!/usr/bin/env bash
# Session 15, call 1 (issue 14 throughput, issue 17 dataset): the offline 1000-grid, our set + the
# seven baselines, harness 3 with the CUPTI cross-check on the graph's own replays, the per-
# implementation isolated-call hold and three cuBLASLt finalists; first chunk (BUDGET s).
# Carried: .whl, .carry/duckdb-site.tar.xz, .carry/tunerlib.tar.gz (library fc9d1115, the one the
# seventh grid measured). Run from the repository root on the GPU machine.
set -uo pipefail
export OUT=${OUT:-/tmp/out}
BUDGET=${BUDGET:-470} bash benchmarks/harness/v3/run_device.sh grid
python3 -c 'import lzma, shutil, sys; shutil.copyfileobj(open(sys.argv[1], "rb"), lzma.open(sys.argv[2], "wb", preset=6))' \
  "$OUT/grid.duckdb" "$OUT/grid.duckdb.xz" && rm "$OUT/grid.duckdb"
ls -la "$OUT"
