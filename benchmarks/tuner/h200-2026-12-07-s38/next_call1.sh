#!/usr/bin/env bash
# Planned in session 38 for the next call that gets an H200 (a call for `nvidia-h200` may get an
# H100, and needs_h200 is for memory only: benchmarks/tuner/next_call.sh picks this plan or the
# H100's by the GPU that came; issue 15): session 36's next_call1.sh, its steps 1-2 (its step 3, the wgmma timelines, ran on an
# H100 in session 38's call 1): movement_floor with its stream_TMxTN_sS rows, the
# pipelined tiled movement (64-k tensor-copy boxes through a ring of stages, K split 1 to 16 ways,
# the reduction left out) and, new in session 38, their streamr twins with the cluster reduction
# a split-K kernel must do, on the 626 configs not compute-bound on an H200, beside cuBLAS in the
# same rotation; then tests/gpu/test_tuner_own.py on cfb35611 (its first H200 run; it passed on
# the H100 in session 37). Then here: ceilings.py, grid_bound.py and pick_vs_movement.py on
# OUT/floor/floor.csv (movement_floor/README.md). Carried: .whl, .carry (device_carry.sh lib).
set -u
top=$OUT
mkdir -p "$top/floor"
OUT=$top/floor bash benchmarks/tuner/movement_floor/run.sh ${FLOOR_S:-330}
mkdir -p /tmp/setup && OUT=/tmp/setup bash benchmarks/harness/v3/run_device.sh >/dev/null  # the wheel, the library
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
CUDA_L2_EXPLORER_TUNER_LIB=$(ls -t /tmp/tb/lib/*.so | head -1) timeout $((575 - SECONDS)) \
  python3 -m pytest -q -rfE -p no:cacheprovider tests/gpu/test_tuner_own.py >"$top/gpu_tests.log" 2>&1
echo "gpu tests: exit $? at $SECONDS s: $(tail -1 "$top/gpu_tests.log")"
