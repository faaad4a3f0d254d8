#!/usr/bin/env bash
# Session 33, call 7 (nvidia-h200, one GPU; issue 15): call 6 found a 32x32 tile's swizzled boxes
# landing 0.5-0.7 us after bulk copies of the same bytes at K = 1024 (move_swz 3.01-3.12 us against
# move_t128 2.31-2.59): 32 tensor copies and 16 barriers against 8 bulk copies and one. The probe's
# new rows copy 4 boxes, or all of K, at once through a 3D map of 64-half k slabs (move_swz3_*,
# mma_swz3_*), same configs, same library kernels, cuBLAS beside them (call6.sh's commands).
set -u
S=benchmarks/tuner/h200-2026-11-29-s33
nvidia-smi --query-gpu=index,name,driver_version,power.limit,clocks.max.sm --format=csv >"$OUT/gpu.csv"
OUT=/tmp/setup bash benchmarks/harness/v3/run_device.sh >/dev/null  # install, unpack the library
lib=$(ls -t /tmp/tb/lib/*.so | head -1)
echo "library $lib" | tee "$OUT/device.txt"
nvcc -O3 -std=c++17 -arch=sm_90a -o /tmp/bulk_bisect benchmarks/tuner/tiny_floor/bulk_bisect.cu -lcublas -ldl \
  2>"$OUT/build.log"
echo "build: exit $?" | tee -a "$OUT/device.txt"
timeout 120 /tmp/bulk_bisect $S/bisect_k1024_configs.txt "$lib" \
  tinyt_16x32x1024_w1x1x4_bk,tinyt_32x32x1024_w2x1x4_bk,tinyt_16x32x512_w1x1x4_bk \
  5 >"$OUT/bisect_slabs.csv" 2>"$OUT/bisect.log"
echo "bisect: exit $? at $SECONDS s" | tee -a "$OUT/device.txt"
