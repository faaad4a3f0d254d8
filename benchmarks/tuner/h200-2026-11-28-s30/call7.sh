#!/usr/bin/env bash
# Session 30, call 7 (nvidia-h200, one GPU; issue 15): the tiled movement as a TMA kernel makes it
# (movement_floor's bulk_TMxTN rows: each tile's A and B panels by bulk copies into shared memory,
# C written once they landed) beside the untiled floor, the L1-load tiles, cuBLAS, on the configs
# with K <= 1024 (where a tile's panels fit shared memory): is the 1.2-1.4 us between the floor and
# every tiny GEMM (ours and nvjet alike) the tiling's own movement?
set -u
F=benchmarks/tuner/movement_floor
nvidia-smi --query-gpu=index,name,driver_version,power.limit,clocks.max.sm --format=csv >"$OUT/gpu.csv"
nvcc -O3 -std=c++17 -arch=sm_90a -o /tmp/movement_floor $F/movement_floor.cu -lcublas 2>"$OUT/floor_build.log"
awk '$3 <= 1024' $F/configs.txt >/tmp/configs_k1024.txt
start=$SECONDS
timeout 150 /tmp/movement_floor /tmp/configs_k1024.txt 5 >"$OUT/floor.csv" 2>"$OUT/floor.log"
echo "movement_floor: exit $? in $((SECONDS - start)) s, $(grep -c ',cublas,' "$OUT/floor.csv") configs, $(grep -c FAIL "$OUT/floor.csv") FAIL" | tee -a "$OUT/floor.log"
