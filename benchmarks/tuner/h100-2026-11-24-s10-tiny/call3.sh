#!/usr/bin/env bash
# Session 10, device call 3: where a tiny HGEMM's time goes (benchmarks/tuner/tiny_floor), then the
# rest of the grid (run 56f89b27, carried in .carry/grid.duckdb.gz and resumed).
set -u
D=benchmarks/tuner/h100-2026-11-24-s10-tiny
mkdir -p "$OUT/g"
nvcc -O3 -std=c++17 -arch=sm_90a -o /tmp/tiny_floor benchmarks/tuner/tiny_floor/tiny_floor.cu -lcublas \
  && /tmp/tiny_floor > "$OUT/tiny_floor.csv" 2> "$OUT/tiny_floor.err"
echo "tiny_floor: exit $? at $SECONDS s"
OUT=$OUT/g BUDGET=300 bash benchmarks/harness/v3/run_device.sh grid
tar czf "$OUT/call3.tar.gz" -C "$OUT" g && rm -rf "$OUT/g"
