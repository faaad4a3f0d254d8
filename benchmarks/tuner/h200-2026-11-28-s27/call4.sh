#!/usr/bin/env bash
# Session 27, device call 4 (issue 15), nvidia-h200-x4: the H200 set's grid after call 3's merge
# (194 picks now the convert-epilogue twin of their kernel, >1% faster old/new/old/new), over all
# GPUs (one worker a GPU), 200 ms clock log. Carried: .whl, .whl-cluster,
# .carry/{duckdb-site.tar.xz,tunerlib.tar.gz}.
set -u
SET=kernels/h200_F32F16F16F32 GRID_GPUS=all CLOCK_LOG=1 BUDGET=${BUDGET:-300} \
  bash benchmarks/harness/v3/run_device.sh grid
nvidia-smi --query-gpu=index,name,driver_version,power.limit,clocks.max.sm --format=csv >"$OUT/gpu.csv"
