#!/usr/bin/env bash
# Session 16, device call 4 (issues 15 and 14): the whole library built here (the wgmma family's
# `_rg` kernels included) and brought back (savelib), then the offline 1000-grid of the set with
# session 16's 49 merged picks, for BUDGET s into grid.duckdb (resumed by call 5).
# Carried: .whl, .carry/duckdb-site.tar.xz, .carry/cutlass-4.2.0.tar.gz.
set -uo pipefail
export OUT=${OUT:-/tmp/out}
BUDGET=${BUDGET:-330} bash benchmarks/harness/v3/run_device.sh savelib grid
