#!/usr/bin/env bash
# Session 40's device calls (issue 15), on an H100, chained on one warm machine, one step a call:
#   run(command="bash benchmarks/tuner/h100-2026-12-07-s40/call.sh STEP", carry=[".whl", ".carry"])
# after `cp benchmarks/tuner/h100-2026-12-07-s39/call4/merged_manifest.json kernels/h100_F32F16F16F32/manifest.json`
# (the bundled set with session 39's re-search part 1), `device_carry.sh lib` and `device_trim.sh out`.
# STEP: part2 | part3 (next_h100_research.sh: search, A/B, merge into the set's manifest) | grid
# (the whole grid, BUDGET seconds) | resume (the rest of the grid, then the model-shape exports).
# A warm machine keeps the previous step's merged manifest and grid store in /tmp/s40: each step
# starts from them, so the steps need no round trip through this machine (which the 30 s idle
# release would not leave time for); a fresh machine starts from the tree's manifest.
# STEP search: the same for CONFIGS=FILE (M_N_K,...), e.g. session 41's lists (plan.sh).
set -u
step=${1:?part2, part3, search, grid or resume}
state=/tmp/s40
mkdir -p $state
set_dir=kernels/h100_F32F16F16F32
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "$step on $gpu" | tee "$OUT/step.txt"
# An H100 set's figures come from an H100: a call for `nvidia-h200` that gets an H200 runs the
# H200's next planned step instead (session 38's: the stream rows and the GPU tests there).
case "$gpu" in
*H100*) ;;
*H200*) exec bash benchmarks/tuner/h200-2026-12-07-s38/next_call1.sh ;;
*) echo "no plan for $gpu" >&2; exit 2 ;;
esac
if [ -f $state/manifest.json ]; then
  cp $state/manifest.json $set_dir/manifest.json && echo "manifest from $state (an earlier step)" | tee -a "$OUT/step.txt"
fi
case "$step" in
part2 | part3 | search)
  if [ "$step" = search ]; then
    bash benchmarks/tuner/search_ab_merge.sh "${CONFIGS:?search needs CONFIGS=FILE}" "--limit 48" \
      "${SEARCH_S:-150}" "${AB_S:-150}" $set_dir
  else
    SEARCH_S=${SEARCH_S:-150} AB_S=${AB_S:-150} bash benchmarks/tuner/h100-2026-12-07-s38/next_h100_research.sh "${step#part}"
  fi
  [ -f "$OUT/merged_manifest.json" ] && cp "$OUT/merged_manifest.json" $state/manifest.json
  ;;
grid)
  BUDGET=${BUDGET:-500} bash benchmarks/tuner/h100-2026-12-07-s37/call2.sh
  cp $set_dir/manifest.json "$OUT/grid_manifest.json"
  tar xzf "$OUT/grid/stores.tar.gz" -C $state grid.duckdb
  ;;
resume)
  # The first part's store, from this machine or carried (.carry/grid.duckdb.xz), resumed; then
  # the set's exports at the five model shapes (tests/gpu/test_lookup_export_device.py), bounded.
  [ -f $state/grid.duckdb ] && gzip -c $state/grid.duckdb >.carry/grid.duckdb.gz && rm -f .carry/grid.duckdb.xz
  BUDGET=${BUDGET:-200} bash benchmarks/tuner/h100-2026-12-07-s37/call2.sh
  cp $set_dir/manifest.json "$OUT/grid_manifest.json"
  export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 CUTLASS_DIR=/tmp/cutlass
  export CUDA_L2_EXPLORER_TUNER_LIB=$(ls -t /tmp/tb/lib/*.so | head -1)
  node="tests/gpu/test_lookup_export_device.py::test_our_set_exports_for_model_shapes[h100]"
  left=$((${EXPORT_END_S:-570} - SECONDS))
  if [ $left -gt 30 ]; then
    timeout $left python3 -m pytest -q -s -rfE -p no:cacheprovider "$node" >"$OUT/export_tests.txt" 2>&1
    echo "$node: exit $? at $SECONDS s: $(tail -1 "$OUT/export_tests.txt")" | tee -a "$OUT/step.txt"
  else
    echo "$node: not run ($left s left)" | tee -a "$OUT/step.txt"
  fi
  ;;
*) echo "unknown step $step" >&2; exit 2 ;;
esac
ls -la "$OUT"
