#!/usr/bin/env bash
# Session 23, device call 7 (issue 17): the reference set's next 64 configs, prebuilt on the
# CPU machine (.carry/refset-builds.tar.xz; 8 jobs x 8 a unit = one batch of those 64, every file
# a cache hit), run 0a6a052f resumed from call 5's store (.carry/refset.duckdb.gz).
# Carried: .whl, .carry/{duckdb-site.tar.xz,cutlass-4.2.0.tar.gz,refset-h100.tar.gz,
# refset.duckdb.gz,refset-builds.tar.xz}.
set -u
REFSET_BUDGET=20 REFSET_JOBS=${REFSET_JOBS:-8} REFSET_PER_UNIT=8 REFSET_LIMIT=${REFSET_LIMIT:-300} REFSET_TIMEOUT=30 \
  bash benchmarks/harness/v3/run_device.sh refset
