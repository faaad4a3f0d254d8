#!/usr/bin/env bash
# Session 24, device call 9 (issue 15): the GPU search test with the tie-keeping shortlist
# (tests/gpu/test_tuner_search.py), then the new export test: each 96-wide kernel the set picks,
# exported from the set as the torch package, built and checked against torch
# (test_lookup_export_device.py::test_our_set_exports_its_96_wide_kernels).
# Carried: .whl, .carry/{duckdb-site.tar.xz,cutlass-4.2.0.tar.gz,tunerlib.tar.gz}.
set -u
s=$SECONDS
TESTS="tuner_search" TEST_TIMEOUT=200 bash benchmarks/harness/v3/run_device.sh tests 2>&1 | grep "^tests"
mkdir -p /tmp/cutlass && tar -xzf .carry/cutlass-4.2.0.tar.gz -C /tmp/cutlass
PYTHONPATH=/tmp/site CUTLASS_DIR=/tmp/cutlass timeout 400 python3 -m pytest -q -rfE -p no:cacheprovider \
  "tests/gpu/test_lookup_export_device.py::test_our_set_exports_its_96_wide_kernels" >"$OUT/export96.txt" 2>&1
echo "export96: exit $? at $((SECONDS - s)) s: $(tail -1 "$OUT/export96.txt")"
