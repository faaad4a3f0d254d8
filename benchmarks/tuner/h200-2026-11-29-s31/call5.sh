#!/usr/bin/env bash
# Session 31, call 5 (nvidia-h200, one GPU; issue 15): where a bulk-fed tiny GEMM's time goes past
# its own movement. tiny_floor/bulk_bisect.cu steps from the bulk movement (move_t128, as
# movement_floor's bulk_32x32) to 64 threads, to the GEMM's fragment reads, to a whole mma.sync GEMM
# of the same 32x32 tile (checked against cuBLAS), beside the library's bulk and direct kernels and
# cuBLAS, on one rotation (bisect_configs.txt). movement_floor (now on probe_common.cuh) on three
# configs, to check the refactor against session 30's figures.
# Carried: .carry/tunerlib.tar.gz (library e7a4db31).
set -u
S=benchmarks/tuner/h200-2026-11-29-s31
top=$OUT
nvidia-smi --query-gpu=index,name,driver_version,power.limit,clocks.max.sm --format=csv >"$top/gpu.csv"
mkdir -p /tmp/tb && tar xzf .carry/tunerlib.tar.gz -C /tmp/tb
lib=$(ls /tmp/tb/lib/*.so | head -1)
nvcc -O3 -std=c++17 -arch=sm_90a -o /tmp/bulk_bisect benchmarks/tuner/tiny_floor/bulk_bisect.cu -lcublas -ldl 2>"$top/build.log" &
nvcc -O3 -std=c++17 -arch=sm_90a -o /tmp/movement_floor benchmarks/tuner/movement_floor/movement_floor.cu -lcublas 2>>"$top/build.log" &
wait
timeout 120 /tmp/bulk_bisect $S/bisect_configs.txt "$lib" \
  tinyb_32x32x512_w2x1_bk,tinyb_16x32x512_w1x1_bk,tinyb_32x64x512_w2x2_bk,tinyd_32x32x64_w2x1_bk,tinyd_32x64x128_w2x2_bk 7 \
  >"$top/bisect.csv" 2>"$top/bisect.log"
echo "bisect: exit $?" | tee -a "$top/bisect.log"
printf "64 64 64\n512 512 128\n256 256 256\n" >/tmp/three.txt
timeout 60 /tmp/movement_floor /tmp/three.txt 5 >"$top/floor.csv" 2>"$top/floor.log"
echo "movement_floor: exit $?" | tee -a "$top/floor.log"
ls -la "$top"
