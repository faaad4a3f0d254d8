#!/usr/bin/env bash
# Issue 18's multi-GPU check, one device call on a two-GPU kind (nvidia-h100-x2 or nvidia-h200-x2)
# from the repository root: the same sample of grid configs (our set + the seven baselines,
# offline) measured on one GPU (--gpus 0) and on both (--gpus all: a local Dask cluster, one
# worker per GPU), alternating (one, all, one, all) into one store; then the comparison
# (benchmarks/cluster/compare_runs.py --by gpus): device times of the two paths and the
# throughput ratio of two GPUs over one. SAMPLE configs (default 100). Carried as for
# h100_cluster_vs_direct.sh: .whl, .carry/duckdb-site.tar.xz, .carry/cutlass-4.2.0.tar.gz (or a
# built library), .whl-cluster (distributed and its dependencies).
set -u
OUT=${OUT:-/tmp/two-gpus-out}
. benchmarks/cluster/prelude.sh
mkdir -p "$OUT/g"
nvidia-smi --query-gpu=index,name,memory.total --format=csv | tee "$OUT/g/device.txt"
for gpus in 0 all 0 all; do
  start=$SECONDS
  python3 -m cuda_l2_explorer --db "$OUT/g/gpus.duckdb" --no-bundled bench --set kernels/h100_F32F16F16F32 \
    --library "$lib" --grid --sample "${SAMPLE:-100}" --seed 5 --mode offline --gpus "$gpus" --progress none --json \
    >>"$OUT/g/bench.json" 2>>"$OUT/g/bench.log"
  echo "--gpus $gpus: exit $? in $(( SECONDS - start )) s" | tee -a "$OUT/g/device.txt"
done
python3 benchmarks/cluster/compare_runs.py "$OUT/g/gpus.duckdb" --by gpus | tee "$OUT/g/compare.md"
tar czf "$OUT/two_gpus.tar.gz" -C "$OUT" g setup && rm -rf "$OUT/g" "$OUT/setup"
