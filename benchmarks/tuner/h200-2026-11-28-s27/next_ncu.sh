#!/usr/bin/env bash
# Planned for the next session on an H200 (issue 15; not run here, ~3 min): why nvjet's 176x128
# keeps its tensor pipe busier than our 128x176 ping-pong at 12288x12288x256 (77% against 68% of
# the cycles, session 27's ncu) now that the alpha multiply is out: Nsight Compute's full set on
# our convert twin of the pick (convert_twins.py's manifest) against cuBLASLt's auto-tuned tn
# candidate 6 and torch.matmul, with the report kept and exported: every raw metric (the warp-stall
# reasons one by one: barrier, long scoreboard, wait, MIO throttle, ...) and the SASS with its
# per-instruction samples (which instruction the consumer warps wait at: the order barrier between
# the two consumer warp groups, the producer's pipeline barrier, the epilogue's TMA store wait).
# Carried: .whl, .carry/{duckdb-site.tar.xz,tunerlib.tar.gz}.
set -u
D=benchmarks/tuner/h200-2026-11-28-s27
S26=benchmarks/tuner/h200-2026-11-28-s26
mkdir -p "$OUT/setup"
OUT=$OUT/setup bash benchmarks/harness/v3/run_device.sh >/dev/null
PYTHONPATH=/tmp/site python3 $D/convert_twins.py kernels/h200_F32F16F16F32/manifest.json /tmp/twins.json
SET=kernels/h200_F32F16F16F32 NCU_MANIFEST=/tmp/twins.json NCU_FAMILY=$S26/ncu_next_configs.txt \
  NCU_SECTIONS="--set full" NCU_REPORT=1 bash benchmarks/harness/v3/run_device.sh ncu-family
