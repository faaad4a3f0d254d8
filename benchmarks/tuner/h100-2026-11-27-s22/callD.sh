#!/usr/bin/env bash
# Session 22, device call D (issues 15, 17): the GPU correctness tests of the tuner's kernels built
# with CUTE_SM90_EXTENDED_MMA_SHAPES_ENABLED (library ea3dcd1c980a45f74642: the full catalog, 69
# kernels, built on the CPU machine, carried as .carry/tunerlib.tar.gz), then the first chunk of
# the offline grid on it with the set's manifest after merging session 19 call 1's 33 faster picks.
# Carried: .whl, .carry/{duckdb-site.tar.xz,tunerlib.tar.gz}.
set -u
s=$SECONDS
TESTS="tuner_kernels tuner_own" bash benchmarks/harness/v3/run_device.sh tests 2>&1 | tail -6
left=$((600 - (SECONDS - s) - 110))
echo "tests done at $((SECONDS - s)) s; grid budget $left s"
BUDGET=$left bash benchmarks/harness/v3/run_device.sh grid 2>&1 | tail -3
echo "done at $((SECONDS - s)) s"
