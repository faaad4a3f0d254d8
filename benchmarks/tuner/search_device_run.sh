#!/usr/bin/env bash
# One device call of the kernel search (issue 4), from the repository root on the GPU machine:
#   bash benchmarks/tuner/search_device_run.sh [tests] [own] [probe] [smoke] [grid SECONDS]
#        [bench SECONDS] [server SECONDS]
# tests: the tuner's GPU tests; smoke: `tune` on three shapes end to end (search, manifest, the
# baseline comparison); grid: `tune --grid` into the store, stopped with SIGINT after SECONDS
# (resumed from .grid/tune.tar when present; the manifest is written when the grid completes);
# bench: our set (kernels/<gpu>_F32F16F16F32) against the seven baselines over the grid, offline,
# resumed likewise from .grid/bench.tar; server: the same in server mode on a fixed sample of
# $SERVER_SAMPLE configs (all 1000 when 0), resumed from .grid/server.tar. own: our own families'
# GPU test alone. probe: our set on launch-bound configs, offline, with CUPTI torn down after each
# launcher audit and without (TEARDOWN_CUPTI=1/0), both stores packed into $OUT.
# Carried: .whl (duckdb, pytest), .tuner-build/lib, .native-build, .grid (when resuming).
set -uo pipefail
OUT=${OUT:-/tmp/search-out}
mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl || exit 1
# .whl holds the project's own wheel too (`pip wheel --no-deps -w .whl .` before the call): the
# checkout is not importable as cuda_l2_explorer without an install.
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
export CUDA_L2_EXPLORER_BUILD_CACHE=/tmp/l2x-build CUDA_L2_EXPLORER_NATIVE_CACHE=/tmp/l2x-native
BL=$(ls -t .native-build/libhgemm_baselines-*.so 2>/dev/null | head -1)
[ -n "$BL" ] && export CUDA_L2_EXPLORER_BASELINES_LIB=$PWD/$BL
TL=$(python3 -c 'from cuda_l2_explorer.tuner.native import default_library; print(default_library())')
{
  date -u +%Y-%m-%dT%H:%M:%SZ
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv
  python3 -c 'import sys, torch; print("python", sys.version.split()[0], "torch", torch.__version__, "cuda", torch.version.cuda)'
  echo "tuner library: $TL"
} >>"$OUT/device.txt" 2>&1
cat "$OUT/device.txt"
GPU=$(python3 -c 'import torch; from cuda_l2_explorer.importer.harness.device import gpu_label; print(gpu_label(torch.cuda.get_device_name()))')
SET=kernels/${GPU}_F32F16F16F32
mkdir -p "$SET"

while [ $# -gt 0 ]; do
  case "$1" in
  tests)
    timeout 240 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_tuner_kernels.py tests/gpu/test_tuner_own.py \
      tests/gpu/test_tuner_search.py \
      2>&1 | tee "$OUT/gpu_tests.txt" | tail -8 | tee -a "$OUT/device.txt"
    ;;
  own)
    timeout 150 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_tuner_own.py \
      2>&1 | tee "$OUT/gpu_tests_own.txt" | tail -4 | tee -a "$OUT/device.txt"
    ;;
  probe)
    for teardown in 0 1; do
      start=$(date +%s)
      TEARDOWN_CUPTI=$teardown python3 -m cuda_l2_explorer --db /tmp/probe$teardown.duckdb --no-bundled bench \
        --set "$SET" --mnk 64_64_64,512_64_128,128_128_128,128_64_512,256_256_256,64_128_64,1024_64_64,64_64_1024 \
        --mode offline --json >"$OUT/probe$teardown.json" 2>"$OUT/probe$teardown.log"
      echo "probe TEARDOWN_CUPTI=$teardown: exit $? after $(( $(date +%s) - start )) s" | tee -a "$OUT/device.txt"
      python3 benchmarks/store_pack.py pack /tmp/probe$teardown.duckdb "$OUT/probe$teardown.tar"
    done
    ;;
  smoke)
    start=$(date +%s)
    python3 -m cuda_l2_explorer --db /tmp/smoke.duckdb --no-bundled tune --mnk 64_64_64,1_4096_4096,777_1000_1032 \
      --manifest /tmp/smoke/manifest.json --json >"$OUT/smoke.json" 2>"$OUT/smoke.log"
    echo "smoke: exit $? in $(( $(date +%s) - start )) s" | tee -a "$OUT/device.txt"
    tail -3 "$OUT/smoke.log"; cat "$OUT/smoke.json"
    ;;
  research)
    # Search again, with every kernel class, the configs listed in .grid/research.txt (those the
    # first search lost or that are launch-bound); the manifest keeps the faster of old and new.
    DB=/tmp/grid.duckdb
    [ -f .grid/grid.tar ] && python3 benchmarks/store_pack.py unpack .grid/grid.tar $DB
    start=$(date +%s)
    timeout -s INT -k 30 "$2" python3 -m cuda_l2_explorer --db $DB --no-bundled tune --mnk "$(cat .grid/research.txt)" \
      --no-measure --keep-faster --manifest "$SET/manifest.json" --progress jsonl --json \
      >"$OUT/research.json" 2>"$OUT/research.log"
    echo "research: exit $? after $(( $(date +%s) - start )) s" | tee -a "$OUT/device.txt"
    tail -2 "$OUT/research.log"
    python3 benchmarks/store_pack.py pack $DB "$OUT/grid.tar"
    cp "$SET/manifest.json" "$OUT/manifest.json"
    shift
    ;;
  export)
    OUT="$OUT/export" timeout "$2" bash benchmarks/export/run_device.sh 2>&1 | tail -25
    shift
    ;;
  grid|bench|server)
    what=$1; secs=$2; shift
    DB=/tmp/$what.duckdb; RESUME=""
    if [ -f ".grid/$what.tar" ]; then python3 benchmarks/store_pack.py unpack ".grid/$what.tar" $DB; RESUME="--resume"; fi
    start=$(date +%s)
    if [ "$what" = grid ]; then
      timeout -s INT -k 30 "$secs" python3 -m cuda_l2_explorer --db $DB --no-bundled tune --grid --no-measure \
        --manifest "$SET/manifest.json" $RESUME --progress jsonl --json >"$OUT/grid.json" 2>"$OUT/grid.log"
    elif [ "$what" = bench ]; then
      timeout -s INT -k 30 "$secs" python3 -m cuda_l2_explorer --db $DB --no-bundled bench --set "$SET" --grid \
        --mode offline $RESUME --progress jsonl --json >"$OUT/bench.json" 2>"$OUT/bench.log"
    else
      SAMPLE=""; [ "${SERVER_SAMPLE:-0}" != 0 ] && SAMPLE="--sample $SERVER_SAMPLE"
      timeout -s INT -k 30 "$secs" python3 -m cuda_l2_explorer --db $DB --no-bundled bench --set "$SET" --grid $SAMPLE \
        --mode server $RESUME --progress jsonl --json >"$OUT/server.json" 2>"$OUT/server.log"
    fi
    echo "$what: exit $? after $(( $(date +%s) - start )) s $RESUME" | tee -a "$OUT/device.txt"
    tail -2 "$OUT/$what.log"
    python3 benchmarks/store_pack.py pack $DB "$OUT/$what.tar"
    [ -f "$SET/manifest.json" ] && cp "$SET/manifest.json" "$OUT/manifest.json"
    ;;
  esac
  shift
done
# The device tool brings back at most 8 files: past that, the logs and JSON go into one tar.
if [ "$(find "$OUT" -maxdepth 1 -type f | wc -l)" -gt 8 ]; then
  (cd "$OUT" && tar cf logs.tar -- *.log *.json 2>/dev/null && rm -f -- *.log *.json)
fi
ls -la "$OUT"
