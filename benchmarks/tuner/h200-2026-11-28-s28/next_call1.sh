#!/usr/bin/env bash
# Planned for the next session's first call (issue 15; not run here: session 28's device time was
# spent; nvidia-h200-x4 or an H100 machine of as many GPUs, ~10 min): what session 28's call 4 left
# past its limits, one job a GPU (run_device.sh tests, each into its own folder), and the K = 2048 ncu:
# GPU 0: test_lookup_export_device.py -k h200 (the five model shapes exported from the H200 set,
#        with its one-buffer and convert kernels; built, run against torch); on an H100 machine
#        -k h100 too: the "done when" asks for the H100 set's exports on an H100;
# GPU 1: test_kernel_build.py alone;
# GPU 2: next_k2048_ncu.sh (our 128x160 2x1 beside nvjet's at 12288x12288x2048);
# GPU 3 (when there): test_export_device.py's one-buffer case again (L2X_EXPORT_LABELS).
# Carried: .whl, .carry/{duckdb-site.tar.xz,cutlass-4.2.0.tar.gz,tunerlib.tar.gz}.
set -u
S=benchmarks/tuner/h200-2026-11-28-s28
GPU_KIND=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
K_ARGS="-k h200"
case "$GPU_KIND" in *H100*) K_ARGS="" ;; esac
bash benchmarks/tuner/on_every_gpu.sh "
  tests_on() { mkdir -p \$OUT/tests\$GPU && OUT=\$OUT/tests\$GPU TESTS=\"\$1\" TEST_TIMEOUT=\$2 \
    bash benchmarks/harness/v3/run_device.sh tests; }
  case \$GPU in
  0) TEST_ARGS='$K_ARGS' tests_on lookup_export_device 560 ;;
  1) tests_on kernel_build 560 ;;
  2) mkdir -p \$OUT/ncu && OUT=\$OUT/ncu bash $S/next_k2048_ncu.sh ;;
  3) L2X_EXPORT_LABELS=one-buffer-epilogue tests_on export_device 400 ;;
  esac"
nvidia-smi --query-gpu=index,name,driver_version,power.limit,clocks.max.sm --format=csv >"$OUT/gpu.csv"
cd "$OUT" && tar cf all.tar --exclude=all.tar . && find . -mindepth 1 -not -name all.tar -delete && ls -la
