#!/usr/bin/env bash
# Session 31, call 3 (nvidia-h200, one GPU; issue 15): call 2's Nsight Compute step again (its
# results went into run_device.sh's logs.tar, which call 2 did not return), now with the source
# counters (per-instruction warp-stall samples, the SASS export) beside the launch and warp-state
# sections: the bulk-fed kernels beside the picks at 512x512x128, 256^3, 128^3 (ncu_bulk.json).
# Carried: .whl, .carry/{duckdb-site.tar.xz,cutlass-4.2.0.tar.gz,tunerlib.tar.gz}.
set -u
# (Since refactored: the commands below ran inline, the same, now in benchmarks/tuner/ncu_source.sh.)
S=benchmarks/tuner/h200-2026-11-29-s31
top=$OUT
SET=kernels/h200_F32F16F16F32 bash benchmarks/tuner/ncu_source.sh $S/ncu_bulk.json $S/ncu_bulk_configs.txt
ls -la "$top"
