#!/usr/bin/env bash
# Session 22, device call A: the GPU test of modules built in units (tests/gpu/test_kernel_build.py,
# new in session 21), then session 19's call 12 (the four large-shape kernels rebuilt with
# CUTE_SM90_EXTENDED_MMA_SHAPES_ENABLED: the search of the 30 probe configs against the seven
# baselines, and ncu's raw page at 12288x8192x512 for the GMMA count).
# Carried: .whl (project wheel, platformdirs), .carry/duckdb-site.tar.xz, .carry/s19/lgl12
# (`build_large_probe.py OUT call8`, library 72d81c68583022fff439, the .so alone).
set -u
s=$SECONDS
TESTS="kernel_build" bash benchmarks/harness/v3/run_device.sh tests 2>&1 | tail -4
echo "tests done at $((SECONDS - s)) s"
bash benchmarks/tuner/h100-2026-11-25-s19/call12.sh
echo "call12 done at $((SECONDS - s)) s"
ls -la "$OUT"
