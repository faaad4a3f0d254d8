#!/usr/bin/env bash
# Session 33, calls 2 and 3 (nvidia-h200, one GPU; issue 15): the H200 set's grid with call 1's 49
# merged picks (tensor-fed tiny kernels, 27 of them the new tile_k = 1024 split tiles) on library
# b2ae9ede, offline, graph-timed, cold L2, beside the seven baselines; resumed from
# .carry/grid.duckdb.xz when carried (call 3, BUDGET=165).
# Carried: .whl, .carry/{duckdb-site.tar.xz,cutlass-4.2.0.tar.gz,tunerlib.tar.gz[,grid.duckdb.xz]}.
set -u
top=$OUT
mkdir -p "$top/grid"
OUT=$top/grid SET=kernels/h200_F32F16F16F32 BUDGET=${BUDGET:-430} bash benchmarks/harness/v3/run_device.sh grid
ls -la "$top" "$top/grid"
