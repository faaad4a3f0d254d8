#!/usr/bin/env bash
# Planned for the next session (issue 15; one H200 or H100, ~2 min; session 28 had too little device
# time left to start a machine): at 12288x12288x2048, our 128x160
# 2x1 swap-AB ping-pong kernel (convert epilogue, e160, five stages: the tile and cluster of
# cuBLASLt's auto-tuned tn candidate 7, nvjet 128x160 2x1, which ours trailed 949 to 901 us in
# search 16470f7a) under Nsight Compute beside that nvjet kernel: cycles, instructions, tensor
# pipe and L2/DRAM bytes a FLOP (the default ncu-family sections, report kept and exported).
# Carried: .whl, .carry/{duckdb-site.tar.xz,tunerlib.tar.gz}.
set -u
S=benchmarks/tuner/h200-2026-11-28-s28
SET=kernels/h200_F32F16F16F32 NCU_MANIFEST=$S/ncu_k2048_128x160.json NCU_FAMILY=$S/ncu_k2048_configs.txt \
  NCU_REPORT=1 bash benchmarks/harness/v3/run_device.sh ncu-family
