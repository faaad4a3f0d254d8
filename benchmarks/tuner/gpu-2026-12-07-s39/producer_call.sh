#!/usr/bin/env bash
# Planned in session 39 (no device lent that session; issue 15) for the next call, on whichever GPU
# comes (next_call.sh dispatches here first): the wgmma family's first copies issued before the
# CTA's barrier (early_copies.patch beside this script, against cutlass/sm90_wgmma_splitk.cuh: each
# first-round stage's barriers initialised and its copies issued at once, by thread 0, where every
# barrier was set up, the CTA synchronised and the descriptors prefetched first). Not in the tree
# until a GPU has run it (the wgmma kernels are picks of both shipped sets and go out in exports),
# as session 35's spread_store.patch. Three steps, ~540 s:
# 1. tests/gpu/test_tuner_own.py -k wgsk on the patched library (the change's first GPU run);
# 2. the wgmma timelines, old and new build, at session 36's four configs and four kernels (the
#    `issued` and `first_landed` columns say what moved);
# 3. lib_ab.sh over this GPU's set's wgmma picks under 10 us (wgsk_configs_GPU.txt: 162 on the H100
#    set with session 38's CUTLASS merges, 174 on the H200 set), old library / new / old / new.
# Land the patch only if step 1 passes and lib_ab is >= 1.01 with no pick slower by > 1% beyond
# the spread (then `git apply`, rebuild: library dc427318); else keep f9c2bc0f.
# Ran on an H100 in session 39 (call 1 of h100-2026-12-07-s39: 1.033), and the patch is in the tree
# since: for the H200, the old library is the tree with the patch reversed (`git apply -R`), the
# new one the tree as it is; the rest as below.
# Prep (session 39, before the patch landed; /tmp may not keep these):
#   the old library: `python -m cuda_l2_explorer.tuner.build --out /tmp/tb_old --jobs 2` on the tree
#   (f9c2bc0f), `tar czf .carry/oldlib.tar.gz -C /tmp/tb_old lib` (its .so and .json only);
#   its timeline build: `tuner.build --catalog wgmma --only "$(cat $S36/next_timeline_wgsk_names.txt)"
#   --timeline --out /tmp/tl_old`, `tar czf .carry/timeline_wgsk_old.tar.gz -C /tmp/tl_old lib`;
#   then `git apply early_copies.patch`, `pip install --no-deps --force-reinstall .`, the same two
#   builds into /tmp/tb (dc427318: `bash benchmarks/device_carry.sh lib`) and /tmp/tl_new
#   (.carry/timeline_wgsk_new.tar.gz), and `git checkout cutlass/sm90_wgmma_splitk.cuh` and
#   reinstall (nothing unmeasured committed). Carried: .whl, .carry; device_trim.sh out first.
set -u
S=benchmarks/tuner/gpu-2026-12-07-s39
S36=benchmarks/tuner/h200-2026-11-29-s36
top=$OUT
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
case "$gpu" in
*H200*) set_dir=kernels/h200_F32F16F16F32 configs=$S/wgsk_configs_h200.txt ;;
*H100*) set_dir=kernels/h100_F32F16F16F32 configs=$S/wgsk_configs_h100.txt
  # The H100 set with session 38's 131 CUTLASS merges (their grid is next: next_h100_call1.sh).
  cp benchmarks/tuner/h100-2026-12-07-s38/call2/merged_manifest.json $set_dir/manifest.json ;;
*) echo "no plan for $gpu" >&2; exit 2 ;;
esac
. benchmarks/tuner/lib_pair.sh && lib_pair producer_call.sh || exit 2
CUDA_L2_EXPLORER_TUNER_LIB=$new timeout 120 python3 -m pytest -q -rfE -p no:cacheprovider \
  tests/gpu/test_tuner_own.py -k wgsk >"$top/gpu_tests_wgsk.log" 2>&1
echo "gpu tests (wgsk): exit $? at $SECONDS s: $(tail -1 "$top/gpu_tests_wgsk.log")" | tee -a "$top/device.txt"
for which in old new; do
  mkdir -p /tmp/tl_$which && tar xzf .carry/timeline_wgsk_$which.tar.gz -C /tmp/tl_$which
  timeout 60 python3 benchmarks/tuner/tiny_floor/timeline.py "$(ls /tmp/tl_$which/lib/*.so | head -1)" \
    $S36/next_timeline_wgsk_configs.txt "$(cat $S36/next_timeline_wgsk_names.txt)" >"$top/timeline_wgsk_$which.csv" 2>&1
  echo "timeline $which: exit $? at $SECONDS s" | tee -a "$top/device.txt"
done
bash benchmarks/tuner/lib_ab.sh "$(cat $configs)" "$old" "$new" $set_dir /tmp/lab $((560 - SECONDS))
xz -T8 -c /tmp/lab/picks.duckdb >"$top/lib_ab.duckdb.xz"
cat /tmp/lab/device.txt /tmp/lab/picks.log >"$top/lib_ab.log" 2>/dev/null
python3 benchmarks/tuner/h100-2026-11-24-s12/picks_ab.py /tmp/lab/picks.duckdb >"$top/lib_ab.txt" 2>&1
tail -3 "$top/lib_ab.txt"
ls -la "$top"
