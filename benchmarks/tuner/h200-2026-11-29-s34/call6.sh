#!/usr/bin/env bash
# Session 34, call 6 (nvidia-h200, one GPU; issue 15): the H200 set's exports on the device.
# 1. test_lookup_export_device.py's new tensor_fed test: each of the 13 tensor-fed tiny kernels the
#    set picks (one-box, c4, p4, K = 2048) exported from the set at its first pick config (torch
#    format), built, checked against torch (the exported launcher encodes its own 2D/3D maps);
# 2. then, in what time is left, the five off-grid model shapes exported from the H200 set as this
#    session left it (test_our_set_exports_for_model_shapes[h200]).
# Carried: .whl, .carry/{duckdb-site.tar.xz,cutlass-4.2.0.tar.gz,tunerlib.tar.gz}.
set -u
top=$OUT
OUT=$top bash benchmarks/harness/v3/run_device.sh >/dev/null  # install the wheel, unpack the library
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 CUTLASS_DIR=/tmp/cutlass
export CUDA_L2_EXPLORER_TUNER_LIB=$(ls -t /tmp/tb/lib/*.so | head -1)
f=tests/gpu/test_lookup_export_device.py
for node in "$f::test_h200_set_exports_its_tensor_fed_picks" "$f::test_our_set_exports_for_model_shapes[h200]"; do
  timeout $((420 - SECONDS)) python3 -m pytest -q -s -rfE -p no:cacheprovider "$node" >>"$top/export_tests.txt" 2>&1
  echo "$node: exit $? at $SECONDS s: $(tail -1 "$top/export_tests.txt")" | tee -a "$top/device.txt"
done
ls -la "$top"
