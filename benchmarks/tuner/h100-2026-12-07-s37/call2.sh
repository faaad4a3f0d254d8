#!/usr/bin/env bash
# Session 37, calls 2 and 3 (nvidia-h100-x1; issue 15): the H100 set's grid with call 1's merges,
# offline, graph-timed, cold L2, beside the seven baselines, on HEAD's library; resumed from
# .carry/grid.duckdb.xz when carried (call 3: a smaller BUDGET, then the H100 set's model-shape
# exports and our kernels' GPU tests in the time left). The grid's store comes back in
# grid/stores.tar.gz (run_device.sh packs it there).
set -u
top=$OUT
mkdir -p "$top/grid"
OUT=$top/grid SET=kernels/h100_F32F16F16F32 BUDGET=${BUDGET:-430} bash benchmarks/harness/v3/run_device.sh grid
[ -n "${THEN_TESTS:-}" ] || { ls -la "$top" "$top/grid"; exit 0; }
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 CUTLASS_DIR=/tmp/cutlass
export CUDA_L2_EXPLORER_TUNER_LIB=$(ls -t /tmp/tb/lib/*.so | head -1)
node="tests/gpu/test_lookup_export_device.py::test_our_set_exports_for_model_shapes[h100]"
timeout $((${EXPORT_END_S:-420} - SECONDS)) python3 -m pytest -q -s -rfE -p no:cacheprovider "$node" >"$top/export_tests.txt" 2>&1
echo "$node: exit $? at $SECONDS s: $(tail -1 "$top/export_tests.txt")" | tee -a "$top/device.txt"
timeout $((560 - SECONDS)) python3 -m pytest -q -rfE -p no:cacheprovider tests/gpu/test_tuner_own.py >"$top/gpu_tests.log" 2>&1
echo "gpu tests: exit $? at $SECONDS s: $(tail -1 "$top/gpu_tests.log")" | tee -a "$top/device.txt"
ls -la "$top" "$top/grid"
