#!/usr/bin/env bash
# One device call of the harness work, from the repository root on the GPU machine:
#   bash benchmarks/harness/run_device.sh tests      # the GPU tests (tests/gpu)
#   bash benchmarks/harness/run_device.sh evidence   # the 60-config run, offline then server
#   bash benchmarks/harness/run_device.sh grid [S]   # the 1000-config grid offline with the A/A set
#                                                     # (aa-torch), killed (-9) after S
#                                                     # seconds; resumes from .grid/grid.tar if present
# Carried: .whl (duckdb, pytest and its needs). Results land in $OUT.
set -uo pipefail
OUT=${OUT:-/tmp/harness-out}
mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl || exit 1
# .whl holds the project's own wheel too (`pip wheel --no-deps -w .whl .` before the call): the
# checkout is not importable as cuda_l2_explorer without an install.
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
export CUDA_L2_EXPLORER_BUILD_CACHE=/tmp/l2x-build CUDA_L2_EXPLORER_NATIVE_CACHE=/tmp/l2x-native
{
  date -u +%Y-%m-%dT%H:%M:%SZ
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv
  nvcc --version | tail -2
  python3 -c 'import sys, torch; print("python", sys.version.split()[0], "torch", torch.__version__, "cuda", torch.version.cuda)'
} >"$OUT/device.txt" 2>&1
cat "$OUT/device.txt"

case "${1:-tests}" in
tests)
  python3 -m pytest -q -p no:cacheprovider tests/gpu 2>&1 | tee "$OUT/gpu_tests.txt"
  ;;
evidence)
  python3 benchmarks/make_evidence_set.py /tmp/sets
  MNK=$(grep -v '^#' benchmarks/harness/configs.txt | tr -s ' \n' ',' | sed 's/^,//; s/,$//')
  for mode in offline server; do
    start=$(date +%s)
    python3 -m cuda_l2_explorer --db "$OUT/harness.duckdb" --no-bundled bench --set /tmp/sets/simple-tiled/h100_F32F16F16F32 \
      --mnk "$MNK" --mode "$mode" --json >"$OUT/$mode.json" 2>"$OUT/$mode.log"
    echo "$mode: exit $? in $(( $(date +%s) - start )) s (builds included)" | tee -a "$OUT/device.txt"
    tail -5 "$OUT/$mode.log"
  done
  ;;
grid)
  python3 -c 'from cuda_l2_explorer.db.shapes import grid_shapes; print(" ".join(map(str, grid_shapes())))' >/tmp/grid.txt
  python3 benchmarks/make_evidence_set.py /tmp/sets /tmp/grid.txt --aa
  DB=/tmp/grid.duckdb
  RESUME=""
  if [ -f .grid/grid.tar ]; then python3 benchmarks/store_pack.py unpack .grid/grid.tar $DB; RESUME="--resume"; fi
  start=$(date +%s)
  timeout -s KILL "${2:-520}" python3 -m cuda_l2_explorer --db $DB --no-bundled bench --set /tmp/sets/aa-torch/h100_F32F16F16F32 \
    --grid --mode offline $RESUME --json >"$OUT/grid.json" 2>"$OUT/grid.log"
  echo "grid: exit $? after $(( $(date +%s) - start )) s $RESUME" | tee -a "$OUT/device.txt"
  python3 -c "import duckdb; c=duckdb.connect('$DB', read_only=True); print('configs committed:', c.execute('select count(*) from run_configs').fetchone()[0], 'duplicates:', c.execute('select count(*) from (select run_id,m,n,k,implementation,metric,padded,count(*) c from measurements group by all having c>1)').fetchone()[0])" | tee -a "$OUT/device.txt"
  python3 benchmarks/store_pack.py pack $DB "$OUT/grid.tar"
  ;;
esac
