#!/usr/bin/env bash
# Session 22, device call B (issue 17): resume the stratified reference-set run 0a6a052f
# (.carry/refset.duckdb.gz = ../h100-2026-11-24/refset-strat.duckdb.gz, 35 of 301 configs) with
# files built two to a translation unit on 16 nvcc jobs (a round of 32 configs), the 4 configs
# prebuilt on the CPU machine (.carry/refset-builds.tar.xz, benchmarks/refset/prebuild.py) as
# cache entries: the bench log's "from the cache" count says whether the keys match here.
# Carried: .whl, .carry/duckdb-site.tar.xz, .carry/refset-h100.tar.gz (test input, never
# committed), .carry/refset.duckdb.gz, .carry/refset-builds.tar.xz.
set -u
REFSET_JOBS=16 REFSET_PER_UNIT=2 BUDGET=${BUDGET:-280} REFSET_LIMIT=${REFSET_LIMIT:-540} REFSET_TIMEOUT=30 \
  bash benchmarks/harness/v3/run_device.sh refset
export PYTHONPATH=/tmp/site
grep -m3 -i "cache" "$OUT/refset.log"
python3 -c 'import duckdb, sys; c = duckdb.connect(sys.argv[1], read_only=True); print("configs with a result:", c.execute("SELECT count(DISTINCT (m, n, k)) FROM run_configs").fetchone()[0])' "$OUT/refset.duckdb"
gzip -9 "$OUT/refset.duckdb"
