#!/usr/bin/env bash
# Issue 15's next device calls, planned in session 41 (that session got no device: its starts were
# refused, then lending paused), one step a call, chained on one warm machine:
#   run(command="bash benchmarks/tuner/h100-2026-12-08-s41/plan.sh STEP", carry=[".whl", ".carry"])
# after `bash benchmarks/device_trim.sh out` (and `back` after the call). Prep on the CPU machine
# (a new session has neither library):
#   python -m cuda_l2_explorer.tuner.build --out /tmp/tb --jobs 2       # dc427318, ~20 min on 2 cores
#   mkdir -p .carry && tar czf .carry/oldlib.tar.gz -C /tmp/tb lib       # the old library alone
#   git apply benchmarks/tuner/h100-2026-12-08-s41/v4_library.patch      # kept applied during the calls
#   pip install -q --no-deps --force-reinstall . && rm -rf build
#   python -m cuda_l2_explorer.tuner.build --out /tmp/tb --jobs 2       # v4 = 54e0c0a4, 29 TUs, ~3 min
#   bash benchmarks/device_carry.sh lib                                   # the newest .so: v4
# Session 42 made that prep on the CPU machine, whose ignored .carry and .whl persist: .carry/oldlib
# = dc427318, .carry/tunerlib = v4 54e0c0a4 (`tar tzf .carry/tunerlib.tar.gz` names it), .whl built
# with the patch applied. Nothing is left before the calls: the v4 and deep steps apply the patch to
# the device's copy of the tree where it is missing, and refuse a carried wheel that is not v4's.
# v4 = dc427318 + v4_library.patch: session 40's v2 (the relaxed last cluster barrier, the
# first-round no-wait), session 41's v3 (the wgmma reductions through memory with every partial's
# load in flight before the first add, same bits) and the sliced reduction past 16 splits (up to
# 64 CTAs streaming one tile's K, summed in groups of 16 met in shared memory; the search offers
# 24-64 where the grid stays one CTA an SM). The patch holds its tests: the GPU test must run as the patch has it
# (splits 17, 32, 64), so it stays applied while the calls run; afterwards
# `git checkout cutlass tuner tests` unless it lands (then commit it with the figures).
# STEP:
#   v4     GPU tests of our own kernels on v4, then lib_ab dc427318 / v4 / dc427318 / v4 over the
#          set's picks v3's parts touch (153 H100, 186 H200), per group (v3_groups.json);
#   deep   the H100 search of research_deep_k.txt (24 configs: M, N <= 256 in at most 5 tiles of
#          64x64, K >= 4096), where splits past 16 are new, then A/B and merge into the set's
#          manifest (handed on in /tmp/s40 on a warm machine);
#   large  the same for research_large.txt (the 140 large configs under 0.98 in grid 1a070160:
#          `loss_by_regime.py db/bundled/measurements.parquet --run 1a070160 --list large:0.98`);
#   grid, resume: the H100 set's grid with the merged manifest (session 40's call.sh);
#   bound  (session 42, either GPU but planned for the H100, ~2-3 min) Nsight Compute at the 24
#          large configs of h100-2026-12-08-s42/bound_configs.txt: torch.matmul, our pick and the
#          cuBLASLt candidate that is each one's best baseline in grid 1a070160, three metrics (the
#          tensor pipe's busy share, clock, time), two calls each; then here
#          `large_bound.py OUT/ncu_family.csv OUT/ncu_family_order.json db/bundled/measurements.parquet
#          1a070160 busy_h100.csv` and `grid_bound.py ... --busy busy_h100.csv`: the H100 large
#          regime's measured ceiling (session 39 profiled torch.matmul's kernel, not the best baseline).
#          An H200 profiles bound_configs_h200.txt with the H200 set (grid ae6434a8 in large_bound.py).
#   recheck (session 42, H100, ~1-2 min, before `grid`) the three picks that session 40's merges
#          replaced and grid 1a070160 then measured 4-10% lower than 7ad9d33e had the replaced ones
#          (h100-2026-12-08-s42/recheck_picks.json, from recheck_picks.py 38679b8): current picks
#          (old) against the replaced ones (new), old/new/old/new, and those > 1% faster merged
#          back into the manifest the grid step measures (/tmp/s40 on a warm machine).
# If v4's GPU tests fail: `cp .carry/oldlib.tar.gz .carry/tunerlib.tar.gz` before `large` (dc427318)
# and skip `deep`. An H200 that comes runs `v4` (its own configs) and, for the other steps, session
# 38's H200 plan (call.sh's own rule).
set -u
step=${1:?v4, deep, large, grid, resume, bound or recheck}
S=benchmarks/tuner/h100-2026-12-08-s41
call=benchmarks/tuner/h100-2026-12-07-s40/call.sh
if [ "$step" = v4 ] || [ "$step" = deep ]; then
  # The device's copy of the tree gets the patch if the tree sent had none (its GPU test is the
  # patch's); the carried wheel must be v4's already (the search's splits), or nothing runs.
  if ! grep -q '^MAX_SLICED_SPLITS = 64' tuner/wgmma.py; then
    { git apply $S/v4_library.patch 2>/dev/null || patch -p1 -s <$S/v4_library.patch; } &&
      echo "v4_library.patch applied to the device's copy" || { echo "v4_library.patch does not apply" >&2; exit 2; }
  fi
  python3 -c 'import glob, sys, zipfile
w = glob.glob(".whl/cuda_l2_explorer-*.whl")
ok = w and b"MAX_SLICED_SPLITS = 64" in zipfile.ZipFile(w[0]).read("cuda_l2_explorer/tuner/wgmma.py")
sys.exit(0 if ok else "the carried wheel is not v4: git apply the patch here, then benchmarks/device_carry.sh lib")' || exit 2
fi
case "$step" in
v4) NAME=v4_call V=v3 S=$S exec bash benchmarks/tuner/h100-2026-12-07-s40/v2_call.sh ;;
deep) CONFIGS=$S/research_deep_k.txt SEARCH_S=${SEARCH_S:-150} AB_S=${AB_S:-120} exec bash $call search ;;
large) CONFIGS=$S/research_large.txt SEARCH_S=${SEARCH_S:-200} AB_S=${AB_S:-150} exec bash $call search ;;
grid | resume) exec bash $call "$step" ;;
bound)
  B=benchmarks/tuner/h100-2026-12-08-s42
  configs=$B/bound_configs.txt  # an H200 profiles its own grid's (ae6434a8) best baselines
  nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200 && configs=$B/bound_configs_h200.txt
  set_dir=kernels/h100_F32F16F16F32
  [ "$configs" = $B/bound_configs_h200.txt ] && set_dir=kernels/h200_F32F16F16F32
  OUT=$OUT/bound SET=$set_dir NCU_REPORT=1 NCU_CALLS=2 NCU_FAMILY=$configs NCU_SECTIONS="--metrics $(cat $B/bound_metrics.txt)" \
    timeout 420 bash benchmarks/harness/v3/run_device.sh ncu-family
  ;;
recheck)
  nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H100 || { echo "recheck: the H100 set's picks, on an H100" >&2; exit 2; }
  B=benchmarks/tuner/h100-2026-12-08-s42 state=/tmp/s40 set_dir=kernels/h100_F32F16F16F32
  [ -f $state/manifest.json ] && cp $state/manifest.json $set_dir/manifest.json
  mkdir -p /tmp/setup $OUT/recheck && OUT=/tmp/setup bash benchmarks/harness/v3/run_device.sh >/dev/null  # the wheel, the library
  export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
  lib=$(ls -t /tmp/tb/lib/*.so | head -1)
  bash benchmarks/tuner/ab_picks.sh $B/recheck_picks.json "$lib" $OUT/recheck "${AB_S:-100}"
  python3 benchmarks/tuner/h100-2026-11-24-s12/picks_ab.py $OUT/recheck/picks.duckdb | tee $OUT/recheck/picks_ab.txt
  bash benchmarks/tuner/merge_picks.sh $B/recheck_picks.json $OUT/recheck/picks.duckdb $set_dir/manifest.json \
    >$OUT/recheck/merge.txt 2>&1
  echo "merge: exit $? $(tail -1 $OUT/recheck/merge.txt)"
  mkdir -p $state && cp $set_dir/manifest.json $state/manifest.json && cp $set_dir/manifest.json $OUT/recheck/merged_manifest.json
  xz -T8 $OUT/recheck/picks.duckdb
  ;;
*) echo "unknown step $step (v4, deep, large, grid, resume, bound, recheck)" >&2; exit 2 ;;
esac
