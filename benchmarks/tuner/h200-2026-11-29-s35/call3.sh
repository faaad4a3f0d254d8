#!/usr/bin/env bash
# Session 35, call 3 (nvidia-h200, one GPU; issue 15): library f03f858a (call 2's barrier set-up, one
# fence, without its tensormap prefetch) against bc2d1a76, then the H200 set's grid (call 1's eight
# K = 2048 merges) on whichever library won, offline, graph-timed, cold L2, beside the seven baselines.
# Prep as call2.sh (tunerlib = f03f858a, oldlib = bc2d1a76, timeline_new = the f03f858a timeline build).
# 1. lib_checks.sh: tests/gpu/test_tuner_own.py on f03f858a, the probe's library rows new and old;
# 2. the new build's timeline;
# 3. lib_ab.sh over the 86 tensor/bulk picks (old/new/old/new); the new library stays for the grid
#    only if old/new >= 1.005 with no config > 2% slower, else bc2d1a76 goes in its place;
# 4. the grid (BUDGET=320 here; call 4 resumes it with .carry/grid.duckdb.xz and the same library).
# (Library f03f858a is commit 494da2f's tuner/csrc/tiny_gemm.cuh, reverted after this call.)
set -u
top=$OUT
S=benchmarks/tuner/h200-2026-11-29-s35
BISECT_CONFIGS=benchmarks/tuner/h200-2026-11-29-s33/next_bisect_configs.txt bash benchmarks/tuner/lib_checks.sh \
  tinyt_16x32x1024_w1x1x4_c4_bk,tinyt_32x32x512_w2x1_bk,tinyt_16x32x512_w1x1_bk "$top/checks.tar"
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
TL_NAMES=tinyt_16x32x1024_w1x1x4_c4_bk,tinyt_16x32x1024_w1x1x4_bk,tinyt_32x32x512_w2x1_bk,tinyb_32x32x512_w2x1_bk,tinyt_16x32x2048_w1x1x4_c4_bk,tinyt_16x32x2048_w1x1x8_c4_bk
mkdir -p /tmp/tl_new && tar xzf .carry/timeline_new.tar.gz -C /tmp/tl_new
timeout 60 python3 benchmarks/tuner/tiny_floor/timeline.py "$(ls /tmp/tl_new/lib/*.so | head -1)" \
  benchmarks/tuner/h200-2026-11-29-s34/next_timeline_configs.txt "$TL_NAMES" >"$top/timeline_new.csv" 2>&1
new=$(ls -t /tmp/tb/lib/*.so | head -1) old=$(ls /tmp/old/lib/*.so | head -1)
bash benchmarks/tuner/lib_ab.sh "$(cat $S/tensor_pick_configs.txt)" "$old" "$new" kernels/h200_F32F16F16F32 /tmp/lab 120
xz -T8 -c /tmp/lab/picks.duckdb >"$top/lib_ab.duckdb.xz"
python3 benchmarks/tuner/h100-2026-11-24-s12/picks_ab.py /tmp/lab/picks.duckdb >"$top/lib_ab.txt" 2>&1
tail -1 "$top/lib_ab.txt"
if python3 - "$top/lib_ab.txt" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
ratios = [float(r) for r in re.findall(r"^\|[^|]+\|[^|]+\|[^|]+\| ([\d.]+) \|", text, re.M)]
geo = re.search(r"old/new geomean ([\d.]+)", text)
sys.exit(0 if geo and float(geo.group(1)) >= 1.005 and ratios and min(ratios) >= 0.98 else 1)
PY
then echo "grid library: new $(basename "$new")" | tee "$top/grid_library.txt"
else
  rm -f /tmp/tb/lib/*.so && cp "$old" /tmp/tb/lib/ && echo "grid library: old $(basename "$old")" | tee "$top/grid_library.txt"
fi
mkdir -p "$top/grid"
OUT=$top/grid SET=kernels/h200_F32F16F16F32 BUDGET=${BUDGET:-320} bash benchmarks/harness/v3/run_device.sh grid
tar cf "$top/grid_logs.tar" -C "$top/grid" --exclude grid.duckdb . && xz -T8 -1 -c "$top/grid/grid.duckdb" >"$top/grid.duckdb.xz"
# (as run: run_device.sh had packed grid.duckdb into stores.tar.gz, so this xz found none and the
# store came back inside grid_logs.tar; next_call1.sh unpacks it first)
rm -rf "$top/grid"
ls -la "$top"
