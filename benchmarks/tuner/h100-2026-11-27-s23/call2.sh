#!/usr/bin/env bash
# Session 23, device call 2 (issues 15, 17): the offline grid of our set after call 1's 22 merged
# picks, on library ea3dcd1c980a45f74642 (carried), the first chunk: BUDGET seconds of configs,
# resumable (the next call carries $OUT/grid.duckdb back as .carry/grid.duckdb.gz).
# Carried: .whl, .carry/{duckdb-site.tar.xz,tunerlib.tar.gz}.
set -u
BUDGET=${BUDGET:-480} bash benchmarks/harness/v3/run_device.sh grid
