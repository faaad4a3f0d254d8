#!/usr/bin/env bash
# Session 30, call 5 (nvidia-h200, one GPU): the tiny family's GPU tests on library 76d68072 (the
# two tiny entry kinds now share TinyEntryBase: workspace() and the launch's argument checks),
# pipelined (tiny_*) and register-direct (tinyd_*) kernels, each on the test's shapes.
# Carried: .whl, .carry/{duckdb-site.tar.xz,cutlass-4.2.0.tar.gz,tunerlib.tar.gz}.
set -u
top=$OUT
mkdir -p "$top/setup"
OUT=$top/setup bash benchmarks/harness/v3/run_device.sh >/dev/null  # install, unpack the library
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
lib=$(ls -t /tmp/tb/lib/*.so | head -1)
echo "library $lib"
CUDA_L2_EXPLORER_TUNER_LIB=$lib timeout 400 python3 -m pytest -q -rfE -p no:cacheprovider \
  tests/gpu/test_tuner_own.py -k tiny >"$top/gpu_tests.log" 2>&1
echo "gpu tests: exit $? $(tail -1 "$top/gpu_tests.log")"
