#!/usr/bin/env bash
# Session 19, device call 7 (issue 15): three ping-pong tiles shaped after cuBLASLt's auto-tuned
# winners (call 6) against our current large-shape pick (128x128 ping-pong), one library built on
# the CPU machine (build_large_probe.py -> .carry/s19/lgl), on the probe's 30 configs: the search
# (stage 1: every kernel and variant in one process), then its kept kernels against the seven
# baselines (harness 3, graph replay, cold L2).
# Carried: .whl, .carry/duckdb-site.tar.xz, .carry/s19/lgl (call 8: LIB=.carry/s19/lgl8, build_large_probe.py call8).
set -u
mkdir -p /tmp/tb && rm -rf /tmp/tb/lib && cp -r "${LIB:-.carry/s19/lgl}" /tmp/tb/lib
grep -v '^#' benchmarks/tuner/cublaslt_algo_probe/configs.txt >/tmp/large30.txt
OUT=$OUT TUNE_FILE=/tmp/large30.txt TUNE_LIMIT=${TUNE_LIMIT:-500} \
  bash benchmarks/harness/v3/run_device.sh retune
