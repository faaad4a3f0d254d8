#!/usr/bin/env bash
# Planned for the next H200 session (issue 15; not run here): Nsight Compute's full set on the one
# shape where the H200 set's pick and nvjet's share a tile and still differ by 10%
# (ncu_next_configs.txt): ours 128x176 ping-pong swap-AB with one 64x176 epilogue subtile against
# cuBLASLt's auto-tuned nvjet 176x128, beside torch.matmul. The full set has the pipe utilisation,
# the warp-state stalls per instruction and the shared-memory bank conflicts the family summary
# leaves out: where the remaining 10% goes (the producer's TMA issue, the two consumer warp groups'
# order barrier, the epilogue's smem-to-global overlap with the next tile's MMA). ~2 min.
# Then: python benchmarks/tuner/ncu_family_report.py ncu_family.csv ncu_family_order.json, and the
# raw CSV's per-section rows for the rest.
# Carried: .whl, .carry/{duckdb-site.tar.xz,tunerlib.tar.gz}.
set -u
D=benchmarks/tuner/h200-2026-11-28-s26
SET=kernels/h200_F32F16F16F32 NCU_FAMILY=$D/ncu_next_configs.txt NCU_SECTIONS="--set full" \
  bash benchmarks/harness/v3/run_device.sh ncu-family
