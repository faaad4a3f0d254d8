#!/usr/bin/env bash
# Session 24, device call 6 (issue 15): the GPU correctness tests of library 1924024b (the eight new
# 96-wide kernels among its 77: test_tuner_kernels.py, test_tuner_own.py), then our picks and
# torch.matmul under Nsight Compute (speed of light, warp states, launch, memory) at five shapes
# (call6_ncu_configs.txt), for the large regime's next kernel work.
# Carried: .whl, .carry/{duckdb-site.tar.xz,tunerlib.tar.gz}.
set -u
s=$SECONDS
TESTS="tuner_kernels tuner_own" TEST_TIMEOUT=240 bash benchmarks/harness/v3/run_device.sh tests 2>&1 | tail -4
mv "$OUT/logs.tar" "$OUT/tests_logs.tar" 2>/dev/null
echo "tests done at $((SECONDS - s)) s"
NCU_FAMILY=benchmarks/tuner/h100-2026-11-27-s24/call6_ncu_configs.txt timeout 300 \
  bash benchmarks/harness/v3/run_device.sh ncu-family 2>&1 | tail -4
echo "done at $((SECONDS - s)) s"
