#!/usr/bin/env bash
# Session 16, device call 5: the rest of call 4's offline grid run, resumed from the carried store
# (.carry/grid.duckdb.xz). Carried: .whl, .carry/duckdb-site.tar.xz, .carry/tunerlib.tar.gz (call 4's
# library), .carry/grid.duckdb.xz.
set -uo pipefail
export OUT=${OUT:-/tmp/out}
BUDGET=${BUDGET:-420} bash benchmarks/harness/v3/run_device.sh grid
