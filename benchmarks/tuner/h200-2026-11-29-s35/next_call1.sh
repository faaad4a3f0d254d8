#!/usr/bin/env bash
# Session 36, call 1 (nvidia-h200, one GPU; issue 15), planned in session 35:
# 1. grid 5589e04b resumed: its last 32 configs (call 4 stopped at 968 of 1000) on library bc2d1a76,
#    the set with session 35 call 1's eight K = 2048 merges;
# 2. the spread store (spread_store.patch: the K groups of a WK > 1 tiny kernel all park their sums
#    and each warp adds and stores a share of C, where warp 0 alone added and stored it), library
#    cbbd03bc: tests/gpu/test_tuner_own.py (its first GPU run), the probe's library rows against
#    bc2d1a76, the two timelines, lib_ab over the 63 picks with K groups (spread_pick_configs.txt).
# Prep (this machine, from the repository root, HEAD's library = bc2d1a76):
#   S=benchmarks/tuner/h200-2026-11-29-s35
#   cp $S/call1/merged_manifest.json kernels/h200_F32F16F16F32/manifest.json   # the grid's set
#   cp $S/grid_5589e04b_partial.duckdb.xz .carry/grid.duckdb.xz
#   python -m cuda_l2_explorer.tuner.build --out /tmp/tb --jobs 2 && bash benchmarks/device_carry.sh lib
#   tar czf .carry/oldlib.tar.gz -C /tmp/tb lib/libl2x_tuner-bc2d1a7641d9a90d1633.so
#   TL=tinyt_16x32x1024_w1x1x4_c4_bk,tinyt_16x32x1024_w1x1x4_p4_bk,tinyt_16x32x2048_w1x1x8_c4_bk,tinyt_32x32x512_w2x1x4_p4_bk
#   python -m cuda_l2_explorer.tuner.build --catalog tiny --only $TL --timeline --out /tmp/tl_old
#   git apply $S/spread_store.patch && pip install --no-deps --force-reinstall . && rm -rf build
#   python -m cuda_l2_explorer.tuner.build --out /tmp/tbs --jobs 2      # cbbd03bc
#   python -m cuda_l2_explorer.tuner.build --catalog tiny --only $TL --timeline --out /tmp/tl_new
#   git checkout -- tuner/csrc/tiny_gemm.cuh tests/test_tuner_tiny.py    # HEAD again
#   tar czf .carry/spreadlib.tar.gz -C /tmp/tbs lib/libl2x_tuner-cbbd03bc03bcdaf24402.so
#   tar czf .carry/timeline.tar.gz -C /tmp/tl_old lib; tar czf .carry/timeline_new.tar.gz -C /tmp/tl_new lib
#   bash benchmarks/device_trim.sh out; run(carry=[".whl", ".carry"]); bash benchmarks/device_trim.sh back
# After: with grid.duckdb.xz back (unxz'd), `bash benchmarks/tuner/bundle_grid.sh grid.duckdb h200
# 1d2e446b14ad463cb929ec6c4daac43e benchmarks/tuner/h200-2026-11-29-s36 $S/call1/tune.duckdb` (unxz'd
# first) and the prose; if lib_ab >= 1.01 with none slower > 1%, land the patch and grid it whole.
set -u
top=$OUT
S=benchmarks/tuner/h200-2026-11-29-s35
mkdir -p "$top/grid"
OUT=$top/grid SET=kernels/h200_F32F16F16F32 BUDGET=${BUDGET:-60} bash benchmarks/harness/v3/run_device.sh grid
[ -f "$top/grid/grid.duckdb" ] || tar xzf "$top/grid/stores.tar.gz" -C "$top/grid"  # run_device.sh packs it
tar cf "$top/grid_logs.tar" -C "$top/grid" --exclude grid.duckdb --exclude stores.tar.gz .
xz -T8 -1 -c "$top/grid/grid.duckdb" >"$top/grid.duckdb.xz" && rm -rf "$top/grid"
tar xzf .carry/spreadlib.tar.gz -C /tmp/tb && touch /tmp/tb/lib/libl2x_tuner-cbbd03bc03bcdaf24402.so  # newest
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
new=/tmp/tb/lib/libl2x_tuner-cbbd03bc03bcdaf24402.so old=$(ls /tmp/old/lib/*.so | head -1)
bash benchmarks/tuner/lib_ab.sh "$(cat $S/spread_pick_configs.txt)" "$old" "$new" kernels/h200_F32F16F16F32 /tmp/lab 120
xz -T8 -c /tmp/lab/picks.duckdb >"$top/lib_ab.duckdb.xz"
python3 benchmarks/tuner/h100-2026-11-24-s12/picks_ab.py /tmp/lab/picks.duckdb >"$top/lib_ab.txt" 2>&1
tail -1 "$top/lib_ab.txt"
ls -la "$top"
