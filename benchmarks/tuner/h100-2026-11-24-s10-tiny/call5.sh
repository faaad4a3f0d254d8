#!/usr/bin/env bash
# Session 10, device calls 5 and 6: the grid with the set call 4 re-searched (kernels/h100_F32F16F16F32),
# in two chunks (the second resumes the first's store, carried in .carry/grid.duckdb.gz).
set -u
OUT=$OUT/g BUDGET=${BUDGET:-500} bash benchmarks/harness/v3/run_device.sh grid
tar czf "$OUT/grid.tar.gz" -C "$OUT" g && rm -rf "$OUT/g"
