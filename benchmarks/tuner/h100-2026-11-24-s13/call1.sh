#!/usr/bin/env bash
# Session 13, device call 1: where the deep-K (small M*N, K >= 8192) time goes.
# 1. cluster_occupancy: how many clusters of 1..16 CTAs fit at once with our kernels' resources, and
#    the GPC sizes (our split-K families put a tile's splits in one cluster along z).
# 2. every candidate of library fc9d1115 measured (tune --limit 1000 --no-measure, search log only)
#    on 9 deep-K configs and two large small-K ones.
# 3. Nsight Compute (launch, occupancy, speed-of-light, memory, warp state) of cuBLAS and several
#    wgsk split counts at 512x512x12288 and 256x512x8192, and the pick at 12288x4096x512.
# 4. Issue 18's one-GPU cluster check (benchmarks/cluster/h100_cluster_vs_direct.sh).
set -u
D=benchmarks/tuner/h100-2026-11-24-s13
mkdir -p "$OUT/p"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv >"$OUT/p/device.txt"
nvcc -O2 -std=c++17 -arch=sm_90a -o /tmp/cluster_occupancy benchmarks/tuner/cluster_occupancy/cluster_occupancy.cu &&
  /tmp/cluster_occupancy >"$OUT/p/cluster_occupancy.txt" 2>&1
cat "$OUT/p/cluster_occupancy.txt"
OUT=$OUT/p TUNE_FILE=$D/deepk_configs.txt TUNE_ARGS="--limit 1000 --no-measure" TUNE_LIMIT=200 \
  NCU_FAMILY=$D/ncu_probe_configs.txt NCU_MANIFEST=$D/ncu_probe_manifest.json \
  bash benchmarks/harness/v3/run_device.sh retune ncu-family
echo "probe done at $SECONDS s"
tar czf "$OUT/probe.tar.gz" -C "$OUT" p && rm -rf "$OUT/p"
timeout 300 bash benchmarks/cluster/h100_cluster_vs_direct.sh
echo "all done at $SECONDS s"
