#!/usr/bin/env bash
# Session 13, device call 2 (library fc9d1115, .carry/tunerlib.tar.gz):
# 1. cluster_occupancy for every cluster size 1..16 (the cost model's GPC layout, tuner/search_space.py);
# 2. the re-search of the 158 configs below 1.0 in grid ca854783 where our split-K families now
#    have split counts other than 2, 4, 8, 16 (a tile's splits are one cluster: counts that fill one
#    wave of clusters), default shortlist, search only (tune --no-measure);
# 3. the configs whose pick changed, benched old, new, old, new in one store (picks.duckdb) against
#    torch.matmul and cuBLASLt heuristic (the grid has the other baselines).
set -u
D=benchmarks/tuner/h100-2026-11-24-s13
mkdir -p "$OUT/p" "$OUT/ab"
nvcc -O2 -std=c++17 -arch=sm_90a -o /tmp/cluster_occupancy benchmarks/tuner/cluster_occupancy/cluster_occupancy.cu &&
  /tmp/cluster_occupancy >"$OUT/p/cluster_occupancy.txt" 2>&1
head -14 "$OUT/p/cluster_occupancy.txt"
OUT=$OUT/p TUNE_FILE=$D/resplit_configs.txt TUNE_ARGS="--no-measure" TUNE_LIMIT=${TUNE_LIMIT:-330} \
  bash benchmarks/harness/v3/run_device.sh retune
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
lib=$(ls -t /tmp/tb/lib/*.so | head -1)
# run_device.sh packs its stores into stores.tar.gz; the tune's store has the kept kernel of every
# config searched, even when the call's limit cut the tune short (no manifest then).
mkdir -p /tmp/s13 && tar xzf "$OUT/p/stores.tar.gz" -C /tmp/s13
PICKS=$(python3 $D/make_picks.py /tmp/s13/tune.duckdb kernels/h100_F32F16F16F32/manifest.json "$OUT/ab/picks")
echo "changed picks: $(echo "$PICKS" | tr ',' '\n' | grep -c _)"
each=$(( (545 - SECONDS) / 4 ))
for which in oldpicks newpicks oldpicks newpicks; do
  [ $each -lt 15 ] && break
  python3 -m cuda_l2_explorer --no-bundled bench --db "$OUT/ab/picks.duckdb" --library "$lib" --progress none --json \
    --set "$OUT/ab/picks/$which/h100_F32F16F16F32" --set-name $which --mnk "$PICKS" --time-budget $each \
    --baselines torch.matmul,cuBLASLt-heuristic-nn,cuBLASLt-heuristic-tn >>"$OUT/ab/picks.json" 2>>"$OUT/ab/picks.log"
  echo "$which: exit $? at $SECONDS s" | tee -a "$OUT/ab/device.txt"
done
tar czf "$OUT/p.tar.gz" -C "$OUT" p && rm -rf "$OUT/p"
tar czf "$OUT/ab.tar.gz" -C "$OUT" ab && rm -rf "$OUT/ab"
