#!/usr/bin/env bash
# Session 32, calls 2 and 3 (nvidia-h200, one GPU; issue 15): the H200 set's grid with the three
# A/B merges combined (kernels/h200_F32F16F16F32/manifest.json = combine_merges.py over session 30's
# call 3, session 31's call 2 and this session's call 1: 80 picks changed, 21 of them tensor-fed
# tiny kernels) on library 053c5496 (panel_gemm two blocks an iteration), offline, graph-timed,
# cold L2, beside the seven baselines; resumed from .carry/grid.duckdb.xz when carried.
# Before the grid when WITH_CHECKS=1 (call 2): tests/gpu/test_tuner_own.py on the new library and
# tiny_floor/bulk_bisect.cu on the new library and the previous one (bb68b600, .carry/oldlib.tar.gz),
# the loop change side by side.
# Carried: .whl, .carry/{duckdb-site.tar.xz,cutlass-4.2.0.tar.gz,tunerlib.tar.gz,oldlib.tar.gz[,grid.duckdb.xz]}.
set -u
S=benchmarks/tuner/h200-2026-11-29-s31
top=$OUT
mkdir -p "$top/grid" /tmp/checks
nvidia-smi --query-gpu=index,name,driver_version,power.limit,clocks.max.sm --format=csv >/tmp/checks/gpu.csv
if [ "${WITH_CHECKS:-0}" = 1 ]; then
  mkdir -p /tmp/setup && OUT=/tmp/setup bash benchmarks/harness/v3/run_device.sh >/dev/null
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
  names=tinyb_32x32x512_w2x1_bk,tinyb_16x32x512_w1x1_bk,tinyb_32x64x512_w2x2_bk,tinyt_32x32x512_w2x1_bk,tinyt_16x32x512_w1x1_bk,tinyt_32x64x512_w2x2_bk
  for which in new old; do
    lib=$new && [ $which = old ] && lib=$old
    timeout 60 /tmp/bulk_bisect $S/bisect_configs.txt "$lib" $names 5 >/tmp/checks/bisect_$which.csv 2>>/tmp/checks/bisect.log
    echo "bisect $which: exit $?" | tee -a /tmp/checks/device.txt
  done
fi
OUT=$top/grid SET=kernels/h200_F32F16F16F32 BUDGET=${BUDGET:-430} bash benchmarks/harness/v3/run_device.sh grid
(cd /tmp/checks && tar cf "$top/checks.tar" .)
ls -la "$top" "$top/grid"
