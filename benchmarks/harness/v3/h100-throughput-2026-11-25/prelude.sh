# Sourced by this folder's call scripts, from the repository root on the GPU machine: installs the
# carried wheel into /tmp/site and unpacks the carried library (run_device.sh), sets the
# environment, unpacks the carried store .carry/grid.duckdb.xz into $OUT/grid.duckdb, and defines
#   bench DB NAME ARGS...   our set with the carried library into store DB; $LOGS/NAME.json and .log
# LOGS (default $OUT/logs) is where the logs go: the device returns few files, so a call packs it.
export OUT=${OUT:-/tmp/out}
bash benchmarks/harness/v3/run_device.sh >/dev/null 2>&1
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 CUDA_L2_EXPLORER_BUILD_CACHE=/tmp/l2x-build CUDA_L2_EXPLORER_NATIVE_CACHE=/tmp/l2x-native
cat "$OUT/device.txt"
python3 -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], "wb"))' \
  .carry/grid.duckdb.xz "$OUT/grid.duckdb"
LIB=$(ls -t /tmp/tb/lib/*.so | head -1)
LOGS=${LOGS:-$OUT/logs} && mkdir -p "$LOGS"
PHASES=benchmarks/harness/v3/h100-throughput-2026-11-24/phases.py
bench() {
  local db=$1 name=$2; shift 2
  local s=$SECONDS
  python3 -m cuda_l2_explorer --db "$db" --no-bundled bench --set kernels/h100_F32F16F16F32 --library "$LIB" \
    --progress none --json "$@" >"$LOGS/$name.json" 2>"$LOGS/$name.log"
  echo "$name: exit $? in $((SECONDS - s)) s: $(tail -1 "$LOGS/$name.log")"
}
