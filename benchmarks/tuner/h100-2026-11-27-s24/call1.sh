#!/usr/bin/env bash
# Session 24, device call 1: (a) issue 17's follow-up, the reference set's last 45 configs
# (36 tiny, 9 large), prebuilt on the CPU machine (.carry/refset-builds.tar.xz), run 0a6a052f
# resumed from call 7's store (.carry/refset.duckdb.gz); (b) issue 15's "done when": the five
# off-grid model shapes exported from the merged set, built and checked on the H100
# (tests/gpu/test_lookup_export_device.py), alone after the refset so its store is packed first.
# Carried: .whl, .carry/{duckdb-site.tar.xz,cutlass-4.2.0.tar.gz,refset-h100.tar.gz,
# refset.duckdb.gz,refset-builds.tar.xz}.
set -u
REFSET_BUDGET=20 REFSET_JOBS=6 REFSET_PER_UNIT=8 REFSET_LIMIT=150 REFSET_TIMEOUT=30 \
  bash benchmarks/harness/v3/run_device.sh refset
# run_device.sh packed the store (stores.tar.gz) at its end: keep it out of the second's packing.
mv "$OUT/stores.tar.gz" "$OUT/refset-stores.tar.gz"
TESTS=lookup_export_device TEST_TIMEOUT=${TEST_TIMEOUT:-420} bash benchmarks/harness/v3/run_device.sh tests
