#!/usr/bin/env bash
# Session 26 (planned; not run in session 25), one H200: Nsight Compute on the H200 set's picks
# beside torch.matmul and the cuBLASLt candidate the grid auto-tuned to, at three shapes where the
# H200 set still loses (call5_ncu_configs.txt):
# achieved DRAM write bandwidth, SM throughput, stall reasons, to decide what an output-bound
# kernel (K <= 256 on large M x N) must do differently. ~90 s; run it in the same call as call4.sh.
# Then: python benchmarks/tuner/ncu_family_report.py ncu_family.csv ncu_family_order.json.
# Carried: .whl, .carry/{duckdb-site.tar.xz,tunerlib.tar.gz}.
set -u
D=benchmarks/tuner/h200-2026-11-28-s25
SET=kernels/h200_F32F16F16F32 NCU_FAMILY=$D/call5_ncu_configs.txt bash benchmarks/harness/v3/run_device.sh ncu-family
