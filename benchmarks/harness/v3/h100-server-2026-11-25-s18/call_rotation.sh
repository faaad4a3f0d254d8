#!/usr/bin/env bash
# Session 18, call 8: server mode on 56 configs (rotation_sample_mnk.txt: 50 drawn at random with
# seed 18, and six of the worst server losses) with one input-set cursor for every implementation
# (worker.Rotation), into the carried store that holds run c8cc872b; then each implementation's
# isolated call against c8cc872b's on the same configs (compare_runs.py).
# Carried: .whl, .carry/duckdb-site.tar.xz, .carry/tunerlib.tar.gz, .carry/grid.duckdb.xz.
set -uo pipefail
E=benchmarks/harness/v3/h100-server-2026-11-25-s18
source benchmarks/harness/v3/h100-throughput-2026-11-25/prelude.sh
bench "$OUT/grid.duckdb" rotation --mode server --mnk "$(cat $E/rotation_sample_mnk.txt)"
python3 $E/compare_runs.py "$OUT/grid.duckdb" "$(python3 -c 'import duckdb,sys; print(duckdb.connect(sys.argv[1], read_only=True).execute("SELECT run_id FROM runs ORDER BY started_at DESC LIMIT 1").fetchone()[0][:8])' "$OUT/grid.duckdb")" c8cc872b | tee "$LOGS/compare.txt"
tar czf "$OUT/logs.tar.gz" -C "$OUT" logs && rm -rf "$LOGS"
cd "$OUT" && xz -3 -T8 grid.duckdb && ls -la
