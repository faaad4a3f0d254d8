#!/usr/bin/env bash
# Session 15, call 5: with every graph's first profiled replay unlabelled, (1) the 20 validation
# configs offline into val.duckdb (timing-mismatch flags), (2) server mode on the 25 configs of
# server_sample.txt into val.duckdb (seconds a config against runs 67ec9aba and 50df5a6b), (3) a new
# offline 1000-grid run into grid.duckdb for BUDGET s (resumed by call 6 from .carry/grid.duckdb.xz).
set -uo pipefail
export OUT=${OUT:-/tmp/out}
D=benchmarks/harness/v3
bash $D/run_device.sh >/dev/null  # installs the wheel into /tmp/site, unpacks the library into /tmp/tb
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 CUDA_L2_EXPLORER_BUILD_CACHE=/tmp/l2x-build CUDA_L2_EXPLORER_NATIVE_CACHE=/tmp/l2x-native
LIB=$(ls -t /tmp/tb/lib/*.so | head -1)
bench() { python3 -m cuda_l2_explorer --db "$1" --no-bundled bench --set kernels/h100_F32F16F16F32 --library "$LIB" "${@:2}" --progress none --json; }
VAL=$(grep -v '^#' $D/configs.txt | tr -s ' \n' ',' | sed 's/^,//; s/,$//')
s=$SECONDS; bench "$OUT/val.duckdb" --mnk "$VAL" --mode offline >"$OUT/val.json" 2>"$OUT/val.log"; echo "val: exit $? in $((SECONDS - s)) s"
s=$SECONDS; bench "$OUT/val.duckdb" --mnk "$(cat $D/h100-throughput-2026-11-24/server_sample.txt)" --mode server >"$OUT/server.json" 2>"$OUT/server.log"
echo "server: exit $? in $((SECONDS - s)) s"
s=$SECONDS; bench "$OUT/grid.duckdb" --grid --mode offline --time-budget "${BUDGET:-400}" >"$OUT/grid.json" 2>"$OUT/grid.log"
echo "grid: exit $? in $((SECONDS - s)) s"; tail -1 "$OUT/grid.log"
cd "$OUT" && tar cf logs.tar *.log *.json && rm -f *.log *.json && tar czf stores.tar.gz *.duckdb && rm -f *.duckdb && ls -la
