#!/usr/bin/env bash
# Session 15, call 3: the offline grid's last chunk (run e6960e9a resumed from the carried store,
# .carry/grid.duckdb.xz), then server mode on a stratified sample of the grid into the same store
# (reusing the offline run's cuBLASLt choices) for SERVER_BUDGET s. Carried as call 1, plus the store.
set -uo pipefail
export OUT=${OUT:-/tmp/out}
BUDGET=${BUDGET:-200} SERVER="--grid --sample ${SERVER_SAMPLE:-300} --seed 15 --time-budget ${SERVER_BUDGET:-330}" \
  bash benchmarks/harness/v3/run_device.sh grid server
