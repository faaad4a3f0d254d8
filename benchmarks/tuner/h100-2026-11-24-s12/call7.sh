#!/usr/bin/env bash
# Session 12, device call 7: tests/gpu/test_harness.py again, after call 6's three failures (the
# launchers that synchronise or allocate per call timed out: the isolated call's hold, now
# checked on the GPU, doubled without bound for them; it is bounded now, MAX_HOLD_GROWTH).
set -u
OUT=$OUT/t TESTS=harness TEST_TIMEOUT=540 bash benchmarks/harness/v3/run_device.sh tests
tar czf "$OUT/tests.tar.gz" -C "$OUT" t && rm -rf "$OUT/t"
