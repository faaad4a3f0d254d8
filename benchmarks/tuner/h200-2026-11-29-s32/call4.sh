#!/usr/bin/env bash
# Session 32, call 4 (nvidia-h200, one GPU; issue 15): the tensor-fed tiny kernels with a barrier a
# box (library 21343721: the MMAs of box j run while boxes j+1.. land), on what device time was left:
# 1. tests/gpu/test_tuner_own.py on the new library;
# 2. tiny_floor/bulk_bisect.cu's tinyt rows on the new library and the previous one (053c5496,
#    .carry/oldlib.tar.gz), side by side;
# 3. a search of the 87 tiny configs with K = 128-512 (call4_configs.txt, smallest M x N first), its
#    A/B against the H200 set (grid 1a40b72f's picks) and the merge (search_ab_merge.sh) into a copy.
# Carried: .whl, .carry/{duckdb-site.tar.xz,cutlass-4.2.0.tar.gz,tunerlib.tar.gz,oldlib.tar.gz}.
set -u
S=benchmarks/tuner/h200-2026-11-29-s31
S2=benchmarks/tuner/h200-2026-11-29-s32
top=$OUT
mkdir -p /tmp/checks /tmp/setup
nvidia-smi --query-gpu=index,name,driver_version,power.limit,clocks.max.sm --format=csv >/tmp/checks/gpu.csv
OUT=/tmp/setup bash benchmarks/harness/v3/run_device.sh >/dev/null  # install, unpack the library
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
new=$(ls -t /tmp/tb/lib/*.so | head -1)
mkdir -p /tmp/old && tar xzf .carry/oldlib.tar.gz -C /tmp/old
old=$(ls /tmp/old/lib/*.so | head -1)
echo "new $new old $old" | tee /tmp/checks/device.txt
nvcc -O3 -std=c++17 -arch=sm_90a -o /tmp/bulk_bisect benchmarks/tuner/tiny_floor/bulk_bisect.cu -lcublas -ldl 2>/tmp/checks/build.log &
CUDA_L2_EXPLORER_TUNER_LIB=$new timeout 120 python3 -m pytest -q -rfE -p no:cacheprovider \
  tests/gpu/test_tuner_own.py >/tmp/checks/gpu_tests.log 2>&1
echo "gpu tests: exit $? $(tail -1 /tmp/checks/gpu_tests.log)" | tee -a /tmp/checks/device.txt
wait
names=tinyt_32x32x512_w2x1_bk,tinyt_16x32x512_w1x1_bk,tinyt_32x64x512_w2x2_bk,tinyt_64x64x512_w4x2_bk
for which in new old; do
  lib=$new && [ $which = old ] && lib=$old
  timeout 60 /tmp/bulk_bisect $S/bisect_configs.txt "$lib" $names 5 >/tmp/checks/bisect_$which.csv 2>>/tmp/checks/bisect.log
  echo "bisect $which: exit $?" | tee -a /tmp/checks/device.txt
done
(cd /tmp/checks && tar cf "$top/checks.tar" .)  # back even if the search below is cut short
OUT=$top bash benchmarks/tuner/search_ab_merge.sh $S2/call4_configs.txt "--limit 48" 80 $((360 - 110 - SECONDS)) kernels/h200_F32F16F16F32
ls -la "$top"
