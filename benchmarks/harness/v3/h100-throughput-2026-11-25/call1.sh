#!/usr/bin/env bash
# Session 17, device call 1 (issues 14 and 17): (1) the server run 8ea6f9af's last 7 configs;
# (2) server mode on 16 configs with the worker under cProfile, to see the host time beyond the
# arrival gaps (a copy of the store, so that its offline run's cuBLASLt choices are reused);
# (3) a new offline 1000-grid (harness with the auto-tuning finalists' margin) for BUDGET s into
# the same store, resumed by call 2.
# Carried: .whl, .carry/duckdb-site.tar.xz, .carry/tunerlib.tar.gz (session 16's library, call 4),
# .carry/grid.duckdb.xz (offline 19c57c82 + server 8ea6f9af at 993 configs).
set -uo pipefail
export OUT=${OUT:-/tmp/out} LOGS=${OUT:-/tmp/out}
source benchmarks/harness/v3/h100-throughput-2026-11-25/prelude.sh
bench "$OUT/grid.duckdb" server_finish --grid --mode server --resume 8ea6f9af084746cb8dc166a9691126d3 --time-budget 90
cp "$OUT/grid.duckdb" /tmp/profile.duckdb
PROFILE_OUT=$OUT/server_worker.prof CUDA_L2_EXPLORER_WORKER=$PWD/benchmarks/harness/v3/profile_worker.py \
  bench /tmp/profile.duckdb server_profile --mode server \
  --mnk 64_64_64,256_256_256,512_64_128,1024_1024_1024,4096_4096_4096,128_16384_128,256_512_16384,2048_2048_512,64_4096_4096,8192_8192_1024,512_512_12288,16384_64_64,1024_128_8192,4096_256_2048,12288_1024_64,2048_8192_16384
python3 - "$OUT/server_worker.prof" >"$OUT/server_profile.txt" <<'PY'
import pstats, sys
for key in ("cumulative", "tottime"):
    pstats.Stats(sys.argv[1]).sort_stats(key).print_stats(45)
PY
python3 $PHASES /tmp/profile.duckdb server latest >"$OUT/server_profile_phases.txt" 2>&1
cat "$OUT/server_profile_phases.txt"
bench "$OUT/grid.duckdb" offline1 --grid --mode offline --time-budget "${BUDGET:-380}"
cd "$OUT" && xz -3 -T8 grid.duckdb && ls -la
