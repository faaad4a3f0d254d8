#!/usr/bin/env bash
# Session 27, device call 5 (issue 15), one H200: tests/gpu/test_export_device.py's new case only
# (a 128x176 ping-pong swap-AB kernel with the convert epilogue, as the H200 set picks at
# 4096x4096x256, exported in the three formats, built, run against torch.matmul), on the device
# time left. Carried: .whl, .carry/{duckdb-site.tar.xz,cutlass-4.2.0.tar.gz,tunerlib.tar.gz}.
set -u
L2X_EXPORT_LABELS=convert-epilogue TESTS="export_device" TEST_TIMEOUT=${TEST_TIMEOUT:-240} \
  bash benchmarks/harness/v3/run_device.sh tests
