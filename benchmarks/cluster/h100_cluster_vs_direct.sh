#!/usr/bin/env bash
# Issue 18's H100 check, one device call from the repository root: the same 20 grid configs
# (our set + the seven baselines, offline) measured directly and through a one-GPU Dask cluster
# on the same machine, alternating (direct, cluster, direct, cluster) into one store; then the
# comparison (benchmarks/cluster/compare_runs.py). Carried: .whl (the slim project wheel and
# platformdirs), .carry/duckdb-site.tar.xz, .carry/tunerlib.tar.gz (a built library), and
# .whl-cluster (distributed and its dependencies: `pip download distributed -d .whl-cluster
# --only-binary=:all: --python-version 3.12 --platform manylinux2014_x86_64 ...`, 5.2 MB).
set -u
OUT=${OUT:-/tmp/cluster-out}
. benchmarks/cluster/prelude.sh
mkdir -p "$OUT/c"
python3 -m distributed.cli.dask_scheduler --host 127.0.0.1 --port 8786 --no-dashboard >"$OUT/c/scheduler.log" 2>&1 &
CUDA_VISIBLE_DEVICES=0 python3 -m distributed.cli.dask_worker tcp://127.0.0.1:8786 --nthreads 1 \
  --resources GPU=1 --no-dashboard --name gpu0 >"$OUT/c/worker.log" 2>&1 &
sleep 8
for path in direct cluster direct cluster; do
  extra=""; [ "$path" = cluster ] && extra="--cluster tcp://127.0.0.1:8786"
  python3 -m cuda_l2_explorer --db "$OUT/c/cluster.duckdb" --no-bundled bench --set kernels/h100_F32F16F16F32 \
    --library "$lib" --grid --sample 20 --seed 4 --mode offline $extra --progress none --json \
    >>"$OUT/c/bench.json" 2>>"$OUT/c/bench.log"
  echo "$path: exit $? at $SECONDS s" | tee -a "$OUT/c/device.txt"
done
python3 benchmarks/cluster/compare_runs.py "$OUT/c/cluster.duckdb" | tee "$OUT/c/compare.md"
kill %1 %2 2>/dev/null
tar czf "$OUT/cluster.tar.gz" -C "$OUT" c setup && rm -rf "$OUT/c" "$OUT/setup"
