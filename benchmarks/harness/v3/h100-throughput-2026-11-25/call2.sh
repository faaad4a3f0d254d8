#!/usr/bin/env bash
# Session 17, device call 2 (issue 14): (1) the offline grid run of call 1 resumed to the end;
# (2) server mode on 16 configs with the worker under cProfile (a copy of the store: its offline
# runs' cuBLASLt choices and launcher audits are reused); (3) server mode on the grid's fixed
# random sample of 100 configs, to set its per-config time beside run 8ea6f9af's on the same configs.
# Carried: .whl, .carry/duckdb-site.tar.xz, .carry/tunerlib.tar.gz, .carry/grid.duckdb.xz (call 1's store).
set -uo pipefail
source benchmarks/harness/v3/h100-throughput-2026-11-25/prelude.sh
bench "$OUT/grid.duckdb" offline2 --grid --mode offline --resume 57434203dcb14c9f847d5f042cbe3e51
python3 $PHASES "$OUT/grid.duckdb" offline 57434203dcb14c9f847d5f042cbe3e51 | tee "$LOGS/offline_phases.txt"
server_profile
cp "$OUT/grid.duckdb" /tmp/sample.duckdb
bench /tmp/sample.duckdb server_sample --grid --sample 100 --mode server
python3 $PHASES /tmp/sample.duckdb server latest | tee "$LOGS/server_sample_phases.txt"
python3 -c 'import duckdb, sys; c = duckdb.connect(sys.argv[1], read_only=True); print(c.execute("""
  SELECT count(*), sum(o.seconds), sum(s.seconds) FROM run_configs s JOIN runs r ON r.run_id = s.run_id
  JOIN run_configs o ON o.m = s.m AND o.n = s.n AND o.k = s.k AND o.run_id = ?
  WHERE r.run_id = (SELECT run_id FROM runs WHERE mode = ? ORDER BY started_at DESC LIMIT 1)""",
  ["8ea6f9af084746cb8dc166a9691126d3", "server"]).fetchall())' /tmp/sample.duckdb | tee "$LOGS/server_sample_vs_8ea6f9af.txt"
python3 - /tmp/sample.duckdb "$LOGS/server_sample_configs.csv" <<'PY'
import duckdb, sys
con = duckdb.connect(sys.argv[1], read_only=True)
latest = con.execute("SELECT run_id FROM runs WHERE mode = 'server' ORDER BY started_at DESC LIMIT 1").fetchone()[0]
con.execute(f"COPY (SELECT m, n, k, seconds, details FROM run_configs WHERE run_id = '{latest}' ORDER BY m, n, k) TO '{sys.argv[2]}'")
PY
tar czf "$OUT/logs.tar.gz" -C "$OUT" logs && rm -rf "$LOGS"
cd "$OUT" && xz -3 -T8 grid.duckdb && ls -la
