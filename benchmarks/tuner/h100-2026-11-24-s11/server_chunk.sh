#!/usr/bin/env bash
# Session 11: the 1000-config server grid of our set (harness 3, 100 QPS, 20 rounds), in chunks of
# under 10 minutes into the store of the offline grid 425ac0fc (carried in .carry/grid.duckdb.xz),
# whose cuBLASLt auto-tuning choices it reuses. FIRST=1 starts the run; later chunks resume it.
set -u
resume="--resume"; [ "${FIRST:-0}" = 1 ] && resume=""
OUT=$OUT/s SERVER="--grid $resume --time-budget ${BUDGET:-520}" bash benchmarks/harness/v3/run_device.sh server
tar czf "$OUT/server.tar.gz" -C "$OUT" s && rm -rf "$OUT/s"
