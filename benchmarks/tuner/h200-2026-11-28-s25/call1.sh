#!/usr/bin/env bash
# Session 25, device calls 1 and 2 (issue 15): the offline grid of our set (kernels/h100_F32F16F16F32,
# picks searched on an H100) on the H200 this session was lent, library 1924024bef4a5655dda4
# (carried, else built there), BUDGET seconds of configs a call, resumable: call 2 carries call 1's
# $OUT/grid.duckdb back as .carry/grid.duckdb.xz. CLOCK_LOG samples the SM clock and power every
# 200 ms for the whole call. Carried: .whl, .carry/{duckdb-site.tar.xz,cutlass-4.2.0.tar.gz,
# tunerlib.tar.gz[,grid.duckdb.xz]}.
set -u
CLOCK_LOG=1 BUDGET=${BUDGET:-500} bash benchmarks/harness/v3/run_device.sh grid
