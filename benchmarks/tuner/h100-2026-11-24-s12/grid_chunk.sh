#!/usr/bin/env bash
# Session 12: the seventh offline grid (our set with the 19 re-picks of calls 2-3, library fc9d1115,
# harness with the cold-L2 rotation cap raised to 8192: every config's sets span 2x the L2), in
# chunks of under 10 minutes. FIRST=1 starts the run (no store carried); later chunks resume the
# store carried in .carry/grid.duckdb.xz. Then, with SERVER_REDO (comma-separated configs), the
# server run in .carry/server.duckdb.xz measures those configs again (cleared by
# benchmarks/harness/v3/redo_configs.py beforehand: their pick changed).
set -u
mkdir -p /tmp/tb && [ -f /tmp/tb/lib/libl2x_tuner-fc9d11150d4bb33229ee.so ] || tar xzf .carry/tunerlib-fc9d1115.tar.gz -C /tmp/tb
OUT=$OUT/g BUDGET=${BUDGET:-500} bash benchmarks/harness/v3/run_device.sh grid
tar czf "$OUT/grid.tar.gz" -C "$OUT" g && rm -rf "$OUT/g"
if [ -n "${SERVER_REDO:-}" ]; then
  mkdir -p "$OUT/s" && python3 -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], "wb"))' \
    .carry/server.duckdb.xz "$OUT/s/grid.duckdb"
  OUT=$OUT/s SERVER="--grid --resume --time-budget 120" bash benchmarks/harness/v3/run_device.sh server
  tar czf "$OUT/server.tar.gz" -C "$OUT" s && rm -rf "$OUT/s"
fi
