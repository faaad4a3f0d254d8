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
server_profile
cat "$OUT/server_profile_phases.txt"
bench "$OUT/grid.duckdb" offline1 --grid --mode offline --time-budget "${BUDGET:-380}"
cd "$OUT" && xz -3 -T8 grid.duckdb && ls -la
