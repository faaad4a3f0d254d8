#!/usr/bin/env bash
# Session 26, device call 4 (issue 15): the offline grid of our H200 set (kernels/h200_F32F16F16F32
# with calls 1-3's faster picks merged, make_h200_set.sh) on a pair of H200s of one host,
# the configs sharded over both (--gpus all), the library with the explicit-epilogue kernels.
# Carried: .whl, .whl-cluster, .carry/{duckdb-site.tar.xz,cutlass-4.2.0.tar.gz,tunerlib.tar.gz}.
set -u
nvidia-smi --query-gpu=index,name,memory.total --format=csv
SET=kernels/h200_F32F16F16F32 GRID_GPUS=all CLOCK_LOG=1 BUDGET=${BUDGET:-480} bash benchmarks/harness/v3/run_device.sh grid
