#!/usr/bin/env bash
# Session 30, call 6 (nvidia-h200, one GPU; issue 15): what programmatic dependent launch (PDL)
# could hide of a tiny GEMM's time. movement_floor with its PDL rows (move_pdl_u1/u4, empty_pdl:
# back to back as dependents; cublas+move_u1 against cublas+move_pdl_u1: behind cuBLAS, which
# triggers no dependent early) on the 626 configs that are not compute-bound.
set -u
F=benchmarks/tuner/movement_floor
nvidia-smi --query-gpu=index,name,driver_version,power.limit,clocks.max.sm --format=csv >"$OUT/gpu.csv"
nvcc -O3 -std=c++17 -arch=sm_90a -o /tmp/movement_floor $F/movement_floor.cu -lcublas 2>"$OUT/floor_build.log"
start=$SECONDS
timeout 240 /tmp/movement_floor $F/configs.txt 5 >"$OUT/floor.csv" 2>"$OUT/floor.log"
echo "movement_floor: exit $? in $((SECONDS - start)) s, $(grep -c ',cublas,' "$OUT/floor.csv") configs" | tee -a "$OUT/floor.log"
grep -c FAIL "$OUT/floor.csv"
