#!/usr/bin/env bash
# Session 23, device call 5 (issue 17): the reference set's next 80 configs, built on the CPU
# machine (benchmarks/refset/prebuild.py, 8 files a unit: .carry/refset-builds.tar.xz), measured
# here: run 0a6a052f resumed from session 22 call E's store (.carry/refset.duckdb.gz). The bench's
# batch is jobs x per-unit configs, grouped into units in order: 10 x 8 = the 80 prebuilt, in the
# prebuild's units, so every one is a cache hit; REFSET_BUDGET stops it before a second batch.
# Carried: .whl, .carry/{duckdb-site.tar.xz,cutlass-4.2.0.tar.gz,refset-h100.tar.gz,
# refset.duckdb.gz,refset-builds.tar.xz}.
set -u
REFSET_BUDGET=20 REFSET_JOBS=${REFSET_JOBS:-10} REFSET_PER_UNIT=8 REFSET_LIMIT=${REFSET_LIMIT:-450} REFSET_TIMEOUT=30 \
  bash benchmarks/harness/v3/run_device.sh refset
