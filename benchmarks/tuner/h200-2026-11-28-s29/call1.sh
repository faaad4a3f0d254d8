#!/usr/bin/env bash
# Session 29, call 1 (nvidia-h200, one GPU; issue 15):
# 1. movement_floor on the 626 configs of the grid that are not compute-bound on the H200
#    (tiny, skinny, small-K): the data movement any HGEMM must do, timed as harness 3 times a
#    kernel, beside cuBLAS's default algorithm in the same rotation (movement_floor/README.md);
# 2. test_kernel_build.py alone in the time left (session 28's call 4 stopped it at 15 of 16).
# Carried: .whl, .carry/{duckdb-site.tar.xz,cutlass-4.2.0.tar.gz,tunerlib.tar.gz}.
set -u
F=benchmarks/tuner/movement_floor
nvidia-smi --query-gpu=index,name,driver_version,power.limit,clocks.max.sm --format=csv >"$OUT/gpu.csv"
nvcc -O3 -std=c++17 -arch=sm_90a -o /tmp/movement_floor $F/movement_floor.cu -lcublas 2>"$OUT/floor_build.log"
start=$SECONDS
timeout 330 /tmp/movement_floor $F/configs.txt 5 >"$OUT/floor.csv" 2>"$OUT/floor.log"
echo "movement_floor: exit $? in $((SECONDS - start)) s, $(($(wc -l <"$OUT/floor.csv") / 6)) configs" | tee -a "$OUT/floor.log"
left=$((570 - SECONDS))
mkdir -p "$OUT/tests" && OUT=$OUT/tests TESTS=kernel_build TEST_TIMEOUT=$left \
  bash benchmarks/harness/v3/run_device.sh tests >"$OUT/tests.log" 2>&1
tail -3 "$OUT/tests.log"
cd "$OUT" && tar cf all.tar --exclude=all.tar . && find . -mindepth 1 -not -name all.tar -delete && ls -la
