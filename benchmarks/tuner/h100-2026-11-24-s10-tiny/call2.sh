#!/usr/bin/env bash
# Session 10, device call 2: Nsight Compute on six tiny shapes (cuBLAS beside our re-searched
# pick: speed of light, warp states, launch, memory), then the first chunk of the grid with the
# re-searched set (the manifest call 1 wrote, now kernels/h100_F32F16F16F32/manifest.json).
set -u
D=benchmarks/tuner/h100-2026-11-24-s10-tiny
R=benchmarks/harness/v3/run_device.sh
mkdir -p "$OUT/n" "$OUT/g"
OUT=$OUT/n NCU_FAMILY=$D/ncu_tiny_configs.txt bash $R ncu-family
OUT=$OUT/g BUDGET=$(( ${CALL_LIMIT:-540} - SECONDS - 40 )) bash $R grid
tar czf "$OUT/call2.tar.gz" -C "$OUT" n g && rm -rf "$OUT/n" "$OUT/g"
