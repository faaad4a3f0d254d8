#!/usr/bin/env bash
# Session 37, call 1 (nvidia-h200, one GPU; issue 15), planned in session 36: the mid band's ceiling
# and where a wgmma kernel's time goes there.
# 1. movement_floor with its new stream_TMxTN_sS rows (the wgmma family's pipeline without its MMAs:
#    64-k tensor-copy boxes through a ring of stages, one wave or more of TM x TN tiles, K split 1
#    to 16 ways with the reduction left out) on the 626 configs that are not compute-bound on an
#    H200, beside cuBLAS in the same rotation (movement_floor/run.sh);
# 2. tests/gpu/test_tuner_own.py on the library at HEAD (0e15cc8c in session 36: the step stamps
#    moved into tuner/csrc/timeline.cuh and added to the wgmma family, off compiled to nothing; the
#    four-stage 64x64 and 64x128 wgmma tiles; the spread store if applied first);
# 3. the wgmma family's first timelines (four band picks at four band configs).
# Then, here: ceilings.py, grid_bound.py and pick_vs_movement.py on OUT/floor.csv
# (movement_floor/README.md).
# Prep (this machine, repository root, venv active, after `pip install --no-deps --force-reinstall .`):
#   python -m cuda_l2_explorer.tuner.build --out /tmp/tb --jobs 2 && bash benchmarks/device_carry.sh lib
#   python -m cuda_l2_explorer.tuner.build --catalog wgmma --only "$(cat $S/next_timeline_wgsk_names.txt)" \
#     --timeline --out /tmp/tl_wgsk && tar czf .carry/timeline_wgsk.tar.gz -C /tmp/tl_wgsk lib
#   (with S=benchmarks/tuner/h200-2026-11-29-s36); bash benchmarks/device_trim.sh out;
#   run(carry=[".whl", ".carry"]); bash benchmarks/device_trim.sh back
set -u
S=benchmarks/tuner/h200-2026-11-29-s36
bash benchmarks/tuner/movement_floor/run.sh 330
mkdir -p /tmp/setup && OUT=/tmp/setup bash benchmarks/harness/v3/run_device.sh >/dev/null  # the wheel, the library
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
CUDA_L2_EXPLORER_TUNER_LIB=$(ls -t /tmp/tb/lib/*.so | head -1) timeout 120 \
  python3 -m pytest -q -rfE -p no:cacheprovider tests/gpu/test_tuner_own.py >"$OUT/gpu_tests.log" 2>&1
echo "gpu tests: exit $? $(tail -1 "$OUT/gpu_tests.log")"
mkdir -p /tmp/tl && tar xzf .carry/timeline_wgsk.tar.gz -C /tmp/tl
timeout 90 python3 benchmarks/tuner/tiny_floor/timeline.py "$(ls /tmp/tl/lib/*.so | head -1)" \
  $S/next_timeline_wgsk_configs.txt "$(cat $S/next_timeline_wgsk_names.txt)" >"$OUT/timeline_wgsk.csv" 2>&1
echo "timeline: exit $?"
