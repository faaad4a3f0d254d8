#!/usr/bin/env bash
# Session 28, call 2 (nvidia-h200-x4; issue 15): the one-buffer epilogue kernels (epi_buffers = 1:
# a fifth stage for 128x176 ping-pong, a sixth for 128x144, a fifth for 128x192 cooperative and
# 64x256 ping-pong e128; library 3c... built here, 124 kernels) searched where they could matter,
# then the merge and the H200 set's grid, in one start:
# 1. on each GPU (the last after tests/gpu/test_tuner_kernels.py -k _d1) a search (48 candidates a
#    shape) of its round-robin share of call2_configs.txt (86 configs: M, N >= 2048 with K <= 1024
#    under 1.0 of the best baseline in grid 64e9f81d, and every config whose pick is a 128x176,
#    128x144, 128x192 or 64x256 e128 kernel; worst first), then the A/B of its changed picks
#    against the H200 set, old/new/old/new (search_then_ab.sh);
# 2. merge_picks.sh takes the picks >1% faster into kernels/h200_F32F16F16F32/manifest.json
#    (returned as merged_manifest.json, each merge's list beside it);
# 3. the merged set's grid over all GPUs (one worker a GPU), 200 ms clock log.
# Carried: .whl, .whl-cluster, .carry/{duckdb-site.tar.xz,tunerlib.tar.gz}.
set -u
D=benchmarks/tuner/h200-2026-11-28-s28
SET=kernels/h200_F32F16F16F32
top=$OUT
SEARCH_S=${SEARCH_S:-120} END_S=${END_S:-300} GRID_BUDGET=${GRID_BUDGET:-250}
mkdir -p "$top/setup"
OUT=$top/setup bash benchmarks/harness/v3/run_device.sh >/dev/null  # install and unpack the library once
export PYTHONPATH=/tmp/site:/tmp/site-cluster PYTHONUNBUFFERED=1
lib=$(ls -t /tmp/tb/lib/*.so | head -1)
gpus=$(nvidia-smi -L | wc -l)
echo "$gpus GPUs, library $lib"
for g in $(seq 0 $((gpus - 1))); do
  part=$top/configs_gpu$g.txt
  tr ',' '\n' <$D/call2_configs.txt | awk -v n="$gpus" -v g="$g" 'NF && (NR - 1) % n == g' | paste -sd, >"$part"
  (
    export CUDA_VISIBLE_DEVICES=$g
    if [ "$g" -eq $((gpus - 1)) ]; then
      CUDA_L2_EXPLORER_TUNER_LIB=$lib timeout 120 python3 -m pytest -q -p no:cacheprovider \
        tests/gpu/test_tuner_kernels.py -k _d1 >"$top/gpu_tests.log" 2>&1
      echo "gpu tests: exit $? $(tail -1 "$top/gpu_tests.log")"
    fi
    OUT=$top/gpu$g CURRENT_MANIFEST=$SET/manifest.json \
      bash benchmarks/tuner/search_then_ab.sh "$part" "--limit 48" "$SEARCH_S" "$END_S"
  ) >"$top/gpu$g.log" 2>&1 &
done
wait
echo "searches and A/Bs done at $SECONDS s"
for g in $(seq 0 $((gpus - 1))); do
  tuned=$(find "$top/gpu$g" -path '*tuned/manifest.json' | head -1)
  [ -f "$top/gpu$g/ab/picks.duckdb" ] && [ -n "$tuned" ] || { echo "gpu $g: no A/B"; continue; }
  bash benchmarks/tuner/merge_picks.sh "$tuned" "$top/gpu$g/ab/picks.duckdb" $SET/manifest.json >"$top/merge$g.txt" 2>&1
  echo "merge $g: exit $? $(tail -1 "$top/merge$g.txt" | head -c 300)"
done
cp $SET/manifest.json "$top/merged_manifest.json"
mkdir -p "$top/grid"
OUT=$top/grid SET=$SET GRID_GPUS=all CLOCK_LOG=1 BUDGET=$GRID_BUDGET bash benchmarks/harness/v3/run_device.sh grid
for g in $(seq 0 $((gpus - 1))); do [ -f "$top/gpu$g/ab/picks.duckdb" ] && xz -T4 "$top/gpu$g/ab/picks.duckdb"; done
[ -f "$top/grid/grid.duckdb" ] && xz -T8 "$top/grid/grid.duckdb"
nvidia-smi --query-gpu=index,name,driver_version,power.limit,clocks.max.sm --format=csv >"$top/gpu.csv"
cd "$top" && tar cf all.tar --exclude=all.tar . && find . -mindepth 1 -not -name all.tar -delete && ls -la
