#!/usr/bin/env bash
# Session 15, call 6: the rest of call 5's offline grid run (d6cead1b), resumed from the carried
# store (.carry/grid.duckdb.xz). Carried as call 5, plus the store.
set -uo pipefail
export OUT=${OUT:-/tmp/out}
BUDGET=${BUDGET:-400} bash benchmarks/harness/v3/run_device.sh grid
