#!/usr/bin/env bash
# Session 36, call 4 (nvidia-h200, one GPU; issue 15): call 3's grid resumed (.carry/grid.duckdb.xz, run
# ae6434a8, 799 of 1000 done) on the same library, b704c710, then, in the call's time left, the H200
# set's model-shape export test (session 35's call 4 ran out of time on it). The grid's store comes
# back in grid/stores.tar.gz (run_device.sh packs it there).
set -u
top=$OUT
mkdir -p "$top/grid"
OUT=$top/grid SET=kernels/h200_F32F16F16F32 BUDGET=${BUDGET:-240} bash benchmarks/harness/v3/run_device.sh grid
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 CUTLASS_DIR=/tmp/cutlass
export CUDA_L2_EXPLORER_TUNER_LIB=$(ls -t /tmp/tb/lib/*.so | head -1)
node="tests/gpu/test_lookup_export_device.py::test_our_set_exports_for_model_shapes[h200]"
timeout $((560 - SECONDS)) python3 -m pytest -q -s -rfE -p no:cacheprovider "$node" >"$top/export_tests.txt" 2>&1
echo "$node: exit $? at $SECONDS s: $(tail -1 "$top/export_tests.txt")" | tee -a "$top/device.txt"
ls -la "$top" "$top/grid"
