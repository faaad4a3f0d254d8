#!/usr/bin/env bash
# Session 30, call 1 (nvidia-h200, one GPU; issue 15): why the register-direct tiny kernels lose at
# K = 128-256 and what a tiny kernel spends beyond the movement floor. Nsight Compute's full set,
# cold L2, the GPU's own clocks, on five tiny configs: each config's pick, the direct kernels, the
# pipelined tiny kernel and a wgmma split-K kernel side by side, torch.matmul and the grid's best
# cuBLASLt candidate beside them (ncu_tiny.json, ncu_tiny_configs.txt); report, raw metrics and
# SASS kept (ncu_where_waits.py and ncu_tiny_table.py read them).
# Carried: .whl, .carry/{duckdb-site.tar.xz,cutlass-4.2.0.tar.gz,tunerlib.tar.gz}.
set -u
S=benchmarks/tuner/h200-2026-11-28-s30
nvidia-smi --query-gpu=index,name,driver_version,power.limit,clocks.max.sm --format=csv >"$OUT/gpu.csv"
mkdir -p "$OUT/ncu" && OUT=$OUT/ncu SET=kernels/h200_F32F16F16F32 NCU_MANIFEST=$S/ncu_tiny.json \
  NCU_FAMILY=$S/ncu_tiny_configs.txt NCU_SECTIONS='--set full' NCU_REPORT=1 \
  timeout 500 bash benchmarks/harness/v3/run_device.sh ncu-family >"$OUT/ncu.log" 2>&1
tail -5 "$OUT/ncu.log"
cd "$OUT" && tar cf all.tar --exclude=all.tar . && find . -mindepth 1 -not -name all.tar -delete && ls -la
