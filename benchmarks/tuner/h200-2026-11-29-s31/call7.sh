#!/usr/bin/env bash
# Session 31, call 7 (nvidia-h200, one GPU; issue 15): where a bulk-fed tiny GEMM's time goes past
# its own movement: call 6 again with the panels by swizzled tensor copies (mma_swz_w2, bulk_bisect.cu).
# Carried: .carry/tunerlib.tar.gz (library e7a4db31).
set -u
S=benchmarks/tuner/h200-2026-11-29-s31
top=$OUT
nvidia-smi --query-gpu=index,name,driver_version,power.limit,clocks.max.sm --format=csv >"$top/gpu.csv"
mkdir -p /tmp/tb && tar xzf .carry/tunerlib.tar.gz -C /tmp/tb
lib=$(ls /tmp/tb/lib/*.so | head -1)
nvcc -O3 -std=c++17 -arch=sm_90a -o /tmp/bulk_bisect benchmarks/tuner/tiny_floor/bulk_bisect.cu -lcublas -ldl 2>"$top/build.log" &
wait
timeout 120 /tmp/bulk_bisect $S/bisect_configs.txt "$lib" \
  tinyb_32x32x512_w2x1_bk,tinyb_16x32x512_w1x1_bk,tinyb_32x64x512_w2x2_bk,tinyd_32x32x64_w2x1_bk,tinyd_32x64x128_w2x2_bk 5 \
  >"$top/bisect.csv" 2>"$top/bisect.log"
echo "bisect: exit $?" | tee -a "$top/bisect.log"
ls -la "$top"
