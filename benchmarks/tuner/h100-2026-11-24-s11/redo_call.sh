#!/usr/bin/env bash
# Written in session 11, for the next session (this one's device time ran out):
# (1) the server run's four worker-first configs (cleared with benchmarks/harness/v3/redo_configs.py,
# the store in .carry/grid.duckdb.xz) measured again by --resume, now that a worker's first config
# warms the GPU for WORKER_WARMUP_S; (2) tests/gpu/test_harness.py with that change.
set -u
BUDGET=200 bash benchmarks/tuner/h100-2026-11-24-s11/server_chunk.sh
OUT=$OUT/t TESTS=harness TEST_TIMEOUT=330 bash benchmarks/harness/v3/run_device.sh tests
tar czf "$OUT/tests.tar.gz" -C "$OUT" t && rm -rf "$OUT/t"
