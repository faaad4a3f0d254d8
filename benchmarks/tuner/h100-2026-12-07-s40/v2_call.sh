#!/usr/bin/env bash
# Planned in session 40 (issue 15), for the next call on either GPU: library v2 = dc427318 with
# v2_library.patch (beside this script): (a) the cluster split-K reduction's last barrier arrives
# relaxed (the release compiled to a MEMBAR.ALL.GPU after the CTA's own stores of C: SASS of
# tiny_64x64x64_w2x2_s4_bn, two MEMBAR.ALL.GPU -> one) and (b) session 39's
# first_round_nowait.patch (the wgmma producer skips the empty-barrier wait of first-round stages,
# which passes at once). Not in the tree until a GPU has run it (its kernels are shipped picks).
# Steps (~250 s with the machine warm):
# 1. tests/gpu/test_tuner_own.py on v2 (every own kernel at every split, run twice, deterministic);
# 2. lib_ab.sh over this GPU's set's picks v2 touches (v2_configs_GPU.txt; groups in v2_groups.json:
#    cluster-reduced 36 / deep-stage wgmma 71 / both 9 on the H100 set; 37 / 99 / 13 on the H200's),
#    dc427318 / v2 / dc427318 / v2, then picks_ab.py (per config) and v2_groups.json's groups.
# PART=cluster: the A/B over the cluster-reduced picks only (the first two groups' 45 on the H100
# set, 50 on the H200's: v2_configs_GPU_cluster.txt), for a call with little device time left.
# Land v2 (git apply, rebuild, device_carry.sh lib) if step 1 passes and a group is >= 1.01 with no
# pick slower by > 1% beyond the spread; a group that loses is reverted in its part of the patch.
# Prep on the CPU machine (a new session has neither library):
#   python -m cuda_l2_explorer.tuner.build --out /tmp/tb --jobs 2          # dc427318, ~25 min
#   mkdir -p .carry && tar czf .carry/oldlib.tar.gz -C /tmp/tb lib          # the old library
#   git apply benchmarks/tuner/h100-2026-12-07-s40/v2_library.patch
#   pip install -q --no-deps --force-reinstall . && rm -rf build
#   python -m cuda_l2_explorer.tuner.build --out /tmp/tb --jobs 2          # v2 (eea217c0): 29 TUs, 4 min
#   bash benchmarks/device_carry.sh lib                                      # the newest .so: v2
#   git checkout tuner/csrc cutlass && pip install -q --no-deps --force-reinstall .  # nothing unmeasured committed
# (.carry/oldlib.tar.gz must then hold only dc427318: build it before v2, or delete v2's .so first.)
#   run(command="bash benchmarks/tuner/h100-2026-12-07-s40/v2_call.sh", carry=[".whl", ".carry"])
# V=v3 S=benchmarks/tuner/h100-2026-12-08-s41: the same call for session 41's v3 (v2 with the
# wgmma reductions through memory loading their partials together) or v4, its configs and groups
# there; NAME labels the call in device.txt (v3_call by default, plan.sh's v4 step: v4_call).
set -u
V=${V:-v2}
S=${S:-benchmarks/tuner/h100-2026-12-07-s40}
top=$OUT
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
case "$gpu" in
*H200*) set_dir=kernels/h200_F32F16F16F32 configs=$S/${V}_configs_h200${PART:+_$PART}.txt ;;
*H100*) set_dir=kernels/h100_F32F16F16F32 configs=$S/${V}_configs_h100${PART:+_$PART}.txt ;;
*) echo "no plan for $gpu" >&2; exit 2 ;;
esac
. benchmarks/tuner/lib_pair.sh && lib_pair "${NAME:-${V}_call}" || exit 2
CUDA_L2_EXPLORER_TUNER_LIB=$new timeout ${TESTS_S:-240} python3 -m pytest -q -rfE -p no:cacheprovider \
  tests/gpu/test_tuner_own.py >"$top/gpu_tests_own.log" 2>&1
status=$?
echo "gpu tests (own): exit $status at $SECONDS s: $(tail -1 "$top/gpu_tests_own.log")" | tee -a "$top/device.txt"
[ $status -eq 0 ] || exit 1  # a kernel that fails is not timed
bash benchmarks/tuner/lib_ab.sh "$(cat $configs)" "$old" "$new" $set_dir /tmp/lab $((${END_S:-560} - SECONDS))
xz -T8 -c /tmp/lab/picks.duckdb >"$top/lib_ab.duckdb.xz"
cat /tmp/lab/device.txt /tmp/lab/picks.log >"$top/lib_ab.log" 2>/dev/null
python3 benchmarks/tuner/h100-2026-11-24-s12/picks_ab.py /tmp/lab/picks.duckdb $S/${V}_groups.json >"$top/lib_ab.txt" 2>&1
tail -5 "$top/lib_ab.txt"
ls -la "$top"
