#!/usr/bin/env bash
# Session 15, call 7: a long call's labelled CUPTI replays span >= 0.5 ms. tests/gpu/test_harness.py,
# then offline into val.duckdb: the 20 validation configs and the 80 configs flagged in run
# d6cead1b (flagged_d6cead1b.txt). Carried as call 5.
set -uo pipefail
export OUT=${OUT:-/tmp/out}
D=benchmarks/harness/v3
TESTS=harness TEST_TIMEOUT=${TEST_TIMEOUT:-400} bash $D/run_device.sh tests >/dev/null; tail -1 "$OUT/gpu_tests.txt"
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 CUDA_L2_EXPLORER_BUILD_CACHE=/tmp/l2x-build CUDA_L2_EXPLORER_NATIVE_CACHE=/tmp/l2x-native
LIB=$(ls -t /tmp/tb/lib/*.so | head -1)
VAL=$(grep -v '^#' $D/configs.txt | tr -s ' \n' ',' | sed 's/^,//; s/,$//')
s=$SECONDS
python3 -m cuda_l2_explorer --db "$OUT/val.duckdb" --no-bundled bench --set kernels/h100_F32F16F16F32 --library "$LIB" \
  --mnk "$VAL,$(cat $D/h100-throughput-2026-11-24/flagged_d6cead1b.txt)" --mode offline --time-budget 150 --progress none --json \
  >"$OUT/val.json" 2>"$OUT/val.log"
echo "val: exit $? in $((SECONDS - s)) s"; tail -1 "$OUT/val.log"
cd "$OUT" && tar czf val.tar.gz val.duckdb val.json val.log && rm -f val.duckdb val.json val.log && ls
