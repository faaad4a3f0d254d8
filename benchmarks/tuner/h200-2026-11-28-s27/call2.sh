#!/usr/bin/env bash
# Session 27, device call 2 (issue 15), on every GPU of the machine (nvidia-h200-x4): call 1's
# A/B again (its steps ran with a stale carried wheel and stopped at an ImportError; the four
# searches were whole), then the merge and the H200 set's grid:
# 1. on each GPU the A/B of that GPU's changed picks (call 1's search store, carried as
#    .carry/s27c1/gpuN-stores.tar.gz) against the H200 set, old/new/old/new (ab_picks.sh);
# 2. merge_picks.sh takes the picks >1% faster into kernels/h200_F32F16F16F32/manifest.json here
#    (returned as merged_manifest.json, with each merge's list);
# 3. the merged set's grid over all GPUs (one worker a GPU), 200 ms clock log.
# Carried: .whl, .whl-cluster, .carry/{duckdb-site.tar.xz,tunerlib.tar.gz,s27c1/}.
set -u
top=$OUT
SET=kernels/h200_F32F16F16F32
AB_S=${AB_S:-240} GRID_BUDGET=${GRID_BUDGET:-250}
mkdir -p "$top/setup"
OUT=$top/setup bash benchmarks/harness/v3/run_device.sh >/dev/null  # install and unpack the library once
export PYTHONPATH=/tmp/site:/tmp/site-cluster PYTHONUNBUFFERED=1
lib=$(ls -t /tmp/tb/lib/*.so | head -1)
gpus=$(nvidia-smi -L | wc -l)
for g in $(seq 0 $((gpus - 1))); do
  [ -f .carry/s27c1/gpu$g-stores.tar.gz ] || continue
  (
    export CUDA_VISIBLE_DEVICES=$g
    store=$(mktemp -d) && tar xzf .carry/s27c1/gpu$g-stores.tar.gz -C "$store"
    CURRENT_MANIFEST=$SET/manifest.json bash benchmarks/tuner/ab_picks.sh "$store/tune.duckdb" "$lib" "$top/ab$g" "$AB_S"
  ) >"$top/ab$g.log" 2>&1 &
done
wait
echo "A/B done at $SECONDS s"
mkdir -p /tmp/pybin && ln -sf "$(command -v python3)" /tmp/pybin/python && export PATH=/tmp/pybin:$PATH
for g in $(seq 0 3); do
  [ -f "$top/ab$g/picks.duckdb" ] || continue
  bash benchmarks/tuner/merge_picks.sh .carry/s27c1/gpu$g-tuned.json "$top/ab$g/picks.duckdb" $SET/manifest.json \
    >"$top/merge$g.txt" 2>&1
  echo "merge $g: exit $? $(tail -1 "$top/merge$g.txt" | head -c 200)"
done
cp $SET/manifest.json "$top/merged_manifest.json"
mkdir -p "$top/grid"
OUT=$top/grid SET=$SET GRID_GPUS=all CLOCK_LOG=1 BUDGET=$GRID_BUDGET bash benchmarks/harness/v3/run_device.sh grid
for g in $(seq 0 3); do [ -f "$top/ab$g/picks.duckdb" ] && xz -T4 "$top/ab$g/picks.duckdb"; done
[ -f "$top/grid/grid.duckdb" ] && xz -T8 "$top/grid/grid.duckdb"
nvidia-smi --query-gpu=index,name,driver_version,power.limit,clocks.max.sm --format=csv >"$top/gpu.csv"
cd "$top" && tar cf all.tar --exclude=all.tar . && find . -mindepth 1 -not -name all.tar -delete && ls -la
