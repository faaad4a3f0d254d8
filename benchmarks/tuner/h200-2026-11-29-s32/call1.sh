#!/usr/bin/env bash
# Session 32, call 1 (planned in session 31 as its next_call1.sh) (nvidia-h200, one GPU; issue 15): the bulk- and tensor-fed tiny kernels after
# session 31's bisect (library bb68b600 or newer, built here: `python -m cuda_l2_explorer.tuner.build --out
# /tmp/tb`, then `bash benchmarks/device_carry.sh lib`; optionally the previous library, e7a4db31
# (commit 3daf9b5), as .carry/oldlib.tar.gz: `tar czf .carry/oldlib.tar.gz -C DIR lib/libl2x_tuner-e7a4db31*.so`.
# Without it the bisect's probe rows (mma_w2 and the moves, also in session 31's call5/call6) anchor the comparison):
# 1. tests/gpu/test_tuner_own.py whole on the new library (the bulk kernels' loop changed, the
#    tensor-fed kernels' first run);
# 2. tiny_floor/bulk_bisect.cu with the new library and the old (its mma_w2 and mma_swz_w2 rows:
#    the swizzled tensor copies, session 31's call 7 that did not run) on bisect_configs.txt;
# 3. the search of the 342 tiny and small-K configs with K <= 512 (48 candidates a shape, the tiny
#    family's groups swept), its A/B against the H200 set and the merge (search_ab_merge.sh).
# Carried: .whl, .carry/{duckdb-site.tar.xz,cutlass-4.2.0.tar.gz,tunerlib.tar.gz,oldlib.tar.gz}.
set -u
S=benchmarks/tuner/h200-2026-11-29-s31
SET=kernels/h200_F32F16F16F32
top=$OUT
nvidia-smi --query-gpu=index,name,driver_version,power.limit,clocks.max.sm --format=csv >"$top/gpu.csv"
mkdir -p /tmp/setup
OUT=/tmp/setup bash benchmarks/harness/v3/run_device.sh >/dev/null  # install, unpack the library
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
new=$(ls -t /tmp/tb/lib/*.so | head -1)
mkdir -p /tmp/old && [ -f .carry/oldlib.tar.gz ] && tar xzf .carry/oldlib.tar.gz -C /tmp/old
old=$(ls /tmp/old/lib/*.so 2>/dev/null | head -1)
echo "new $new old $old" | tee "$top/device.txt"
nvcc -O3 -std=c++17 -arch=sm_90a -o /tmp/bulk_bisect benchmarks/tuner/tiny_floor/bulk_bisect.cu -lcublas -ldl 2>"$top/build.log" &
CUDA_L2_EXPLORER_TUNER_LIB=$new timeout 120 python3 -m pytest -q -rfE -p no:cacheprovider \
  tests/gpu/test_tuner_own.py >"$top/gpu_tests.log" 2>&1
echo "gpu tests: exit $? $(tail -1 "$top/gpu_tests.log")" | tee -a "$top/device.txt"
wait
names=tinyb_32x32x512_w2x1_bk,tinyb_16x32x512_w1x1_bk,tinyb_32x64x512_w2x2_bk,tinyt_32x32x512_w2x1_bk,tinyt_16x32x512_w1x1_bk,tinyt_32x64x512_w2x2_bk,tinyt_64x64x512_w4x2_bk
for which in new old; do
  lib=$new && [ $which = old ] && lib=$old
  [ -z "$lib" ] && continue
  timeout 90 /tmp/bulk_bisect $S/bisect_configs.txt "$lib" $names 5 >"$top/bisect_$which.csv" 2>>"$top/bisect.log"
  echo "bisect $which: exit $?" | tee -a "$top/device.txt"
done
OUT=$top bash benchmarks/tuner/search_ab_merge.sh $S/next_call1_configs.txt "--limit 48" 170 $((480 - 200 - SECONDS)) $SET
# at most eight files come back: the small text files travel in one tar
(cd "$top" && tar cf logs.tar --remove-files $(ls *.csv *.txt *.log 2>/dev/null))
ls -la "$top"
