# Sourced by this folder's call scripts, from the repository root on the GPU machine: installs the
# carried wheel into /tmp/site and unpacks the carried library (run_device.sh), sets the
# environment, unpacks the carried store .carry/grid.duckdb.xz into $OUT/grid.duckdb, and defines
#   bench DB NAME ARGS...   our set with the carried library into store DB; $LOGS/NAME.json and .log
#   server_profile          server mode on 16 configs spanning the regimes, the worker under cProfile
#                           (a copy of the store, so its offline runs' choices and audits are reused)
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
server_profile() {
  cp "$OUT/grid.duckdb" /tmp/profile.duckdb
  PROFILE_OUT=$LOGS/server_worker.prof CUDA_L2_EXPLORER_WORKER=$PWD/benchmarks/harness/v3/profile_worker.py \
    bench /tmp/profile.duckdb server_profile --mode server \
    --mnk 64_64_64,256_256_256,512_64_128,1024_1024_1024,4096_4096_4096,128_16384_128,256_512_16384,2048_2048_512,64_4096_4096,8192_8192_1024,512_512_12288,16384_64_64,1024_128_8192,4096_256_2048,12288_1024_64,2048_8192_16384
  python3 - "$LOGS/server_worker.prof" >"$LOGS/server_profile.txt" <<'PY'
import pstats, sys
for key in ("cumulative", "tottime"):
    pstats.Stats(sys.argv[1]).sort_stats(key).print_stats(60)
PY
  python3 $PHASES /tmp/profile.duckdb server latest | tee "$LOGS/server_profile_phases.txt"
}
