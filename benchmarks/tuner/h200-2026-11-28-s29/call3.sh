#!/usr/bin/env bash
# Session 29, calls 3 and 4 (nvidia-h200, one GPU; issue 15): the H200 set's grid with call 2's 78
# merges (kernels/h200_F32F16F16F32/manifest.json = call2/merged_manifest.json; library 07fee54c),
# offline, graph-timed, cold L2, beside the seven baselines. One GPU does not finish the 1000
# configs in one call: BUDGET stops starting configs after that many seconds; the store goes back in
# grid/stores.tar.gz (run_device.sh packs it) and, carried as .carry/grid.duckdb.xz, the next call
# resumes it. Ran three times: BUDGET 430 (832 configs), 150 (166), 30 (the last 2).
# Carried: .whl, .carry/{duckdb-site.tar.xz,cutlass-4.2.0.tar.gz,tunerlib.tar.gz[,grid.duckdb.xz]}.
set -u
top=$OUT
mkdir -p "$top/grid"
OUT=$top/grid SET=kernels/h200_F32F16F16F32 BUDGET=${BUDGET:-430} bash benchmarks/harness/v3/run_device.sh grid
nvidia-smi --query-gpu=index,name,driver_version,power.limit,clocks.max.sm --format=csv >"$top/gpu.csv"
cd "$top" && tar cf all.tar --exclude=all.tar . && find . -mindepth 1 -not -name all.tar -delete && ls -la
