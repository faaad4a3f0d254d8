#!/usr/bin/env bash
# movement_floor on the GPU machine, from the repository root: builds it, runs it on CONFIGS
# (default: configs.txt, the 626 configs that are not compute-bound on an H200) within SECONDS,
# and leaves gpu.csv, floor.csv, floor.log and floor_build.log in $OUT. MOVEMENT_FLOOR_TILED (name
# prefixes, e.g. bulk_) limits the tiled rows, for a short call (movement_floor.cu).
#   OUT=DIR [MOVEMENT_FLOOR_TILED=bulk_] bash benchmarks/tuner/movement_floor/run.sh [SECONDS] [CONFIGS]
set -u
seconds=${1:-330}
F=benchmarks/tuner/movement_floor
configs=${2:-$F/configs.txt}
nvidia-smi --query-gpu=index,name,driver_version,power.limit,clocks.max.sm --format=csv >"$OUT/gpu.csv"
nvcc -O3 -std=c++17 -arch=sm_90a -o /tmp/movement_floor $F/movement_floor.cu -lcublas 2>"$OUT/floor_build.log" ||
  { tail -5 "$OUT/floor_build.log"; exit 1; }
start=$SECONDS
timeout "$seconds" /tmp/movement_floor "$configs" 5 >"$OUT/floor.csv" 2>"$OUT/floor.log"
echo "movement_floor: exit $? in $((SECONDS - start)) s, $(cut -d, -f2-4 "$OUT/floor.csv" | sed 1d | sort -u | wc -l) configs," \
  "$(grep -c ',FAIL$' "$OUT/floor.csv") failed checks" | tee -a "$OUT/floor.log"
