#!/usr/bin/env bash
# Session 35, call 4 (nvidia-h200, one GPU; issue 15): call 3's grid resumed (.carry/grid.duckdb.xz, run
# 5589e04b) on the same library, bc2d1a76 (.carry/tunerlib.tar.gz), then the export device tests that
# session 34's review refactored (_first_picks) and could not re-run on a GPU.
set -u
top=$OUT
mkdir -p "$top/grid"
OUT=$top/grid SET=kernels/h200_F32F16F16F32 BUDGET=${BUDGET:-240} bash benchmarks/harness/v3/run_device.sh grid
tar cf "$top/grid_logs.tar" -C "$top/grid" --exclude grid.duckdb . && rm -rf "$top/grid"
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 CUTLASS_DIR=/tmp/cutlass
export CUDA_L2_EXPLORER_TUNER_LIB=$(ls -t /tmp/tb/lib/*.so | head -1)
f=tests/gpu/test_lookup_export_device.py
for node in "$f::test_h200_set_exports_its_tensor_fed_picks" "$f::test_our_set_exports_for_model_shapes[h200]"; do
  timeout $((560 - SECONDS)) python3 -m pytest -q -s -rfE -p no:cacheprovider "$node" >>"$top/export_tests.txt" 2>&1
  echo "$node: exit $? at $SECONDS s: $(tail -1 "$top/export_tests.txt")" | tee -a "$top/device.txt"
done
ls -la "$top"
