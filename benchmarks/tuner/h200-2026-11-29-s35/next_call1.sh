#!/usr/bin/env bash
# Session 36, call 1 (nvidia-h200, one GPU; issue 15), planned in session 35. Library at HEAD:
# b704c710 (bc2d1a76 + the wgmma family's twelve wide tiles: wgsk_{64,128}x192x64_s4_bn and
# wgsk_{64,128}x96x64_s4_bk, three reductions each, never run on a GPU), and the spread store
# (spread_store.patch on top: never run either):
# 1. lib_checks.sh: tests/gpu/test_tuner_own.py on the spread library (every kernel of HEAD's too);
#    the probe's library rows, spread against HEAD;
# 2. the two timelines (HEAD's and the spread build's);
# 3. lib_ab over the 63 picks with K groups (spread_pick_configs.txt), HEAD / spread / HEAD / spread.
# Prep (this machine, from the repository root, with the venv active):
#   S=benchmarks/tuner/h200-2026-11-29-s35
#   python -m cuda_l2_explorer.tuner.build --out /tmp/tb --jobs 2          # HEAD: b704c710
#   tar czf .carry/oldlib.tar.gz -C /tmp/tb lib/$(python -c "import json; print(json.load(open('/tmp/tb/lib/latest.json'))['library'])")
#   TL=tinyt_16x32x1024_w1x1x4_c4_bk,tinyt_16x32x1024_w1x1x4_p4_bk,tinyt_16x32x2048_w1x1x8_c4_bk,tinyt_32x32x512_w2x1x4_p4_bk
#   python -m cuda_l2_explorer.tuner.build --catalog tiny --only $TL --timeline --out /tmp/tl_old
#   git apply $S/spread_store.patch && pip install -q --no-deps --force-reinstall . && rm -rf build
#   python -m cuda_l2_explorer.tuner.build --out /tmp/tb --jobs 2          # the spread library: newest
#   python -m cuda_l2_explorer.tuner.build --catalog tiny --only $TL --timeline --out /tmp/tl_new
#   bash benchmarks/device_carry.sh lib     # .carry/tunerlib.tar.gz = the spread library
#   git checkout -- tuner/csrc/tiny_gemm.cuh tests/test_tuner_tiny.py && pip install -q --no-deps --force-reinstall . && rm -rf build
#   tar czf .carry/timeline.tar.gz -C /tmp/tl_old lib; tar czf .carry/timeline_new.tar.gz -C /tmp/tl_new lib
#   bash benchmarks/device_trim.sh out; run(carry=[".whl", ".carry"]); bash benchmarks/device_trim.sh back
# Then next_call2.sh (the wide tiles' search), and a whole grid (session 34's call3.sh steps) on the
# spread library if lib_ab >= 1.01 with none slower > 1% (the patch lands), else on HEAD's, with
# call 2's merges and session 35 call 1's (combine_merges.py); bundle with bundle_grid.sh in place of
# 1d2e446b (grid 5589e04b's partial store stays evidence only).
set -u
top=$OUT
S=benchmarks/tuner/h200-2026-11-29-s35
BISECT_CONFIGS=benchmarks/tuner/h200-2026-11-29-s33/next_bisect_configs.txt bash benchmarks/tuner/lib_checks.sh \
  tinyt_16x32x1024_w1x1x4_c4_bk,tinyt_16x32x1024_w1x1x4_p4_bk "$top/checks.tar"
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
TL=tinyt_16x32x1024_w1x1x4_c4_bk,tinyt_16x32x1024_w1x1x4_p4_bk,tinyt_16x32x2048_w1x1x8_c4_bk,tinyt_32x32x512_w2x1x4_p4_bk
for which in old new; do
  tarball=.carry/timeline.tar.gz && [ $which = new ] && tarball=.carry/timeline_new.tar.gz
  mkdir -p /tmp/tl_$which && tar xzf $tarball -C /tmp/tl_$which
  timeout 60 python3 benchmarks/tuner/tiny_floor/timeline.py "$(ls /tmp/tl_$which/lib/*.so | head -1)" \
    benchmarks/tuner/h200-2026-11-29-s34/next_timeline_configs.txt "$TL" >"$top/timeline_$which.csv" 2>&1
done
new=$(ls -t /tmp/tb/lib/*.so | head -1) old=$(ls /tmp/old/lib/*.so | head -1)
bash benchmarks/tuner/lib_ab.sh "$(cat $S/spread_pick_configs.txt)" "$old" "$new" kernels/h200_F32F16F16F32 /tmp/lab 120
xz -T8 -c /tmp/lab/picks.duckdb >"$top/lib_ab.duckdb.xz"
python3 benchmarks/tuner/h100-2026-11-24-s12/picks_ab.py /tmp/lab/picks.duckdb >"$top/lib_ab.txt" 2>&1
tail -1 "$top/lib_ab.txt"
ls -la "$top"
