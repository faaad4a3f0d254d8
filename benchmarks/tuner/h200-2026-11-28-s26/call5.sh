#!/usr/bin/env bash
# Session 26, device call 5 (issue 15), one H200: tests/gpu/test_export_device.py with its new
# output-bound case (a 128x160 ping-pong swap-AB kernel with one 64x160 epilogue subtile, exported
# in the three formats, built, run against torch.matmul), on the device time left.
# Carried: .whl, .carry/{duckdb-site.tar.xz,cutlass-4.2.0.tar.gz,tunerlib.tar.gz}.
set -u
TESTS="export_device" TEST_TIMEOUT=${TEST_TIMEOUT:-380} bash benchmarks/harness/v3/run_device.sh tests
