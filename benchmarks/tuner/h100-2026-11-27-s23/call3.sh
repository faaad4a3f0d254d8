#!/usr/bin/env bash
# Session 23, device call 3 (issues 15, 17): the offline grid's other 107 configs (call 2's store
# resumed, carried as .carry/grid.duckdb.gz), then the GPU tests of what changed since they last
# ran on the device: test_kernel_build.py (session 22's fixed count of planted files) and
# test_lookup_export_device.py (issue 15's "done when": the set exported for five off-grid model
# shapes builds and matches torch, with the manifest as merged in sessions 22 and 23).
# Carried: .whl, .carry/{duckdb-site.tar.xz,tunerlib.tar.gz,grid.duckdb.gz,cutlass-4.2.0.tar.gz}.
set -u
BUDGET=${BUDGET:-200} TESTS="kernel_build lookup_export_device" TEST_TIMEOUT=400 \
  bash benchmarks/harness/v3/run_device.sh grid tests
