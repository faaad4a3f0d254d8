#!/usr/bin/env bash
# Session 19, device call 9 (issue 15): why call 8's 128x160 ping-pong (swap-AB, 5 stages) takes
# 1.4x the time of our 128x128 ping-pong when cuBLASLt's 128x160 is its fastest: both (and
# torch.matmul) at 12288x8192x512 under Nsight Compute (speed of light, warp stalls, launch,
# memory sections; cold L2), from call 8's library (.carry/s19/lgl8).
# Carried: .whl, .carry/duckdb-site.tar.xz, .carry/s19/lgl8.
set -u
mkdir -p /tmp/tb && rm -rf /tmp/tb/lib && cp -r .carry/s19/lgl8 /tmp/tb/lib
D=benchmarks/tuner/h100-2026-11-25-s19
OUT=$OUT NCU_FAMILY=$D/call9_ncu_configs.txt NCU_MANIFEST=$D/call9_ncu_manifest.json \
  bash benchmarks/harness/v3/run_device.sh ncu-family
