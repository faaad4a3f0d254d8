#!/usr/bin/env bash
# Session 12, device call 1: (1) session 11's redo_call.sh: the server run's four worker-first
# configs measured again by --resume (library f9cff806, .carry/tunerlib.tar.gz) and
# tests/gpu/test_harness.py; (2) the GPU tests of our kernels with library fc9d1115
# (.carry/tunerlib-fc9d1115.tar.gz: four new CUTLASS catalog kernels, never run before).
set -u
bash benchmarks/tuner/h100-2026-11-24-s11/redo_call.sh
mkdir -p /tmp/tb-fc9d && tar xzf .carry/tunerlib-fc9d1115.tar.gz -C /tmp/tb-fc9d
lib=/tmp/tb-fc9d/lib/libl2x_tuner-fc9d11150d4bb33229ee.so
for f in tuner_kernels tuner_own; do
  CUDA_L2_EXPLORER_TUNER_LIB=$lib PYTHONPATH=/tmp/site timeout 200 python3 -m pytest -q -rfE -p no:cacheprovider \
    "tests/gpu/test_$f.py" >>"$OUT/fc9d_tests.txt" 2>&1
  echo "tests $f (fc9d1115): exit $? at $SECONDS s: $(tail -1 "$OUT/fc9d_tests.txt")" | tee -a "$OUT/fc9d_tests.txt"
done
grep -E "^(FAILED|ERROR)" "$OUT/fc9d_tests.txt" | head -20
