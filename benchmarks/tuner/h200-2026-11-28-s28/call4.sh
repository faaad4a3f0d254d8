#!/usr/bin/env bash
# Session 28, call 4 (nvidia-h200-x4; issue 15): the GPU tests this session's changes touch, one
# group a GPU (run_device.sh tests, each into its own folder):
# GPU 0: test_export_device.py whole (call 3's one-buffer case failed in the test's own calls: its
#        SPEC section 4 run passed B row-major as b_col_major, and its ctypes call of the C API
#        passed B row-major where hgemm.h says column-major; both now follow the export's layout);
# GPU 1: test_lookup_export_device.py (the five off-grid model shapes exported from the H100 set and,
#        new, from the H200 set with its one-buffer and convert kernels; built, run against torch);
# GPU 2: test_tuner_kernels.py whole (124 kernels) and test_tuner_search.py;
# GPU 3: test_kernel_build.py and test_tuner_own.py.
# Carried: .whl, .carry/{duckdb-site.tar.xz,cutlass-4.2.0.tar.gz,tunerlib.tar.gz}.
set -u
bash benchmarks/tuner/on_every_gpu.sh "
  tests_on() { mkdir -p \$OUT/tests\$GPU && OUT=\$OUT/tests\$GPU TESTS=\"\$1\" TEST_TIMEOUT=\$2 \
    bash benchmarks/harness/v3/run_device.sh tests; }
  case \$GPU in
  0) tests_on export_device 480 ;;
  1) tests_on lookup_export_device 480 ;;
  2) tests_on 'tuner_kernels tuner_search' 240 ;;
  3) tests_on 'kernel_build tuner_own' 240 ;;
  esac"
nvidia-smi --query-gpu=index,name,driver_version,power.limit,clocks.max.sm --format=csv >"$OUT/gpu.csv"
cd "$OUT" && tar cf all.tar --exclude=all.tar . && find . -mindepth 1 -not -name all.tar -delete && ls -la
