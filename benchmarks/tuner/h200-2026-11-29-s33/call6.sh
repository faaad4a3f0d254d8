#!/usr/bin/env bash
# Session 33, call 6 (nvidia-h200, one GPU; issue 15): the floor first at K = 512-1024, where the
# tensor-fed tiny picks only tie the best baseline (grid d10fddf2: 64x1024x1024 4.58 us against
# 4.55): tiny_floor/bulk_bisect.cu (now K <= 1024) at bisect_k1024_configs.txt, its steps (a 32x32
# tile's landing alone, move_*/move_swz; its GEMM with a barrier a box on 2, 4, 8 warps,
# mma_swzpb_*) beside the library's tile_k = 512 and 1024 tensor kernels (b2ae9ede) and cuBLAS.
# NAMES (library kernels) and CSV (the result's name) as call7.sh sets them.
# Carried: .whl, .carry/{duckdb-site.tar.xz,cutlass-4.2.0.tar.gz,tunerlib.tar.gz}.
set -u
S=benchmarks/tuner/h200-2026-11-29-s33
nvidia-smi --query-gpu=index,name,driver_version,power.limit,clocks.max.sm --format=csv >"$OUT/gpu.csv"
OUT=/tmp/setup bash benchmarks/harness/v3/run_device.sh >/dev/null  # install, unpack the library
lib=$(ls -t /tmp/tb/lib/*.so | head -1)
echo "library $lib" | tee "$OUT/device.txt"
nvcc -O3 -std=c++17 -arch=sm_90a -o /tmp/bulk_bisect benchmarks/tuner/tiny_floor/bulk_bisect.cu -lcublas -ldl \
  2>"$OUT/build.log"
echo "build: exit $?" | tee -a "$OUT/device.txt"
names=${NAMES:-tinyt_16x32x1024_w1x1x4_bk,tinyt_32x32x1024_w2x1x4_bk,tinyt_32x64x1024_w2x2x2_bk,tinyt_16x32x512_w1x1x4_bk,tinyt_32x32x512_w2x1_bk}
timeout 150 /tmp/bulk_bisect $S/bisect_k1024_configs.txt "$lib" "$names" 5 >"$OUT/${CSV:-bisect_k1024.csv}" 2>"$OUT/bisect.log"
echo "bisect: exit $? at $SECONDS s" | tee -a "$OUT/device.txt"
