#!/usr/bin/env bash
# Session 24, device calls 4 and 5 (issue 15): the offline grid of our set after calls 2-3's 83
# merged picks, on library 1924024bef4a5655dda4 (carried), BUDGET seconds of configs a call,
# resumable: call 5 carries call 4's $OUT/grid.duckdb back as .carry/grid.duckdb.gz.
# Carried: .whl, .carry/{duckdb-site.tar.xz,tunerlib.tar.gz[,grid.duckdb.gz]}.
set -u
BUDGET=${BUDGET:-480} bash benchmarks/harness/v3/run_device.sh grid
