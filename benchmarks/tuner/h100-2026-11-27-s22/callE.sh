#!/usr/bin/env bash
# Session 22, device call E (issue 17): the rest of the offline grid run 06080f57 (call D's store,
# carried as .carry/grid.duckdb.gz), then the reference set's next 64 configs, built on the CPU
# machine (benchmarks/refset/prebuild.py: .carry/refset-builds.tar.xz), so that this call only
# measures them (run 0a6a052f resumed from .carry/refset.duckdb.gz, call C's store); REFSET_BUDGET
# stops the bench after that one round, before it would build the next here.
# Carried: .whl, .carry/{duckdb-site.tar.xz,tunerlib.tar.gz,grid.duckdb.gz,cutlass-4.2.0.tar.gz,
# refset-h100.tar.gz,refset.duckdb.gz,refset-builds.tar.xz}.
set -u
BUDGET=200 REFSET_BUDGET=20 REFSET_JOBS=16 REFSET_PER_UNIT=4 REFSET_LIMIT=${REFSET_LIMIT:-380} REFSET_TIMEOUT=30 \
  bash benchmarks/harness/v3/run_device.sh grid refset
