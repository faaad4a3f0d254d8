#!/usr/bin/env bash
# Session 12, device call 6: (1) the server run 67ec9aba's 64^3 measured again (cleared with
# benchmarks/harness/v3/redo_configs.py in .carry/server.duckdb.xz) as the first config of a fresh
# worker, with the isolated call's hold now checked on the GPU's timeline (worker.TorchBackend);
# (2) tests/gpu/test_harness.py.
set -u
mkdir -p /tmp/tb && [ -f /tmp/tb/lib/libl2x_tuner-fc9d11150d4bb33229ee.so ] || tar xzf .carry/tunerlib-fc9d1115.tar.gz -C /tmp/tb
mkdir -p "$OUT/s" && python3 -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], "wb"))' \
  .carry/server.duckdb.xz "$OUT/s/grid.duckdb"
OUT=$OUT/s SERVER="--grid --resume --time-budget 60" bash benchmarks/harness/v3/run_device.sh server
tar czf "$OUT/server.tar.gz" -C "$OUT" s && rm -rf "$OUT/s"
OUT=$OUT/t TESTS=harness TEST_TIMEOUT=400 bash benchmarks/harness/v3/run_device.sh tests
tar czf "$OUT/tests.tar.gz" -C "$OUT" t && rm -rf "$OUT/t"
