#!/usr/bin/env bash
# Session 17, device calls 3+ (issue 14's server target, issue 17's server grid): the whole server-
# mode 1000-grid with the isolated call behind the stream gate (native hb_gate; call 3 ran the first
# gate, cuStreamWaitValue32, which hung its GPU test, most likely at a first call that synchronised inside it) and the offline run's
# cuBLASLt choices and launcher audits reused, in chunks of BUDGET s into the carried store; a new
# run when the store has no unfinished one (FRESH=1), else resumed. GPU_TESTS=1 first runs the new
# gate test and the server-mode test of tests/gpu/test_harness.py.
# Carried: .whl, .carry/duckdb-site.tar.xz, .carry/tunerlib.tar.gz, .carry/grid.duckdb.xz.
set -uo pipefail
source benchmarks/harness/v3/h100-throughput-2026-11-25/prelude.sh
if [ "${GPU_TESTS:-0}" = 1 ]; then
  s=$SECONDS
  timeout 240 python3 -m pytest -q -rfE -s -p no:cacheprovider tests/gpu/test_harness.py -k "stream_gate or server_mode" \
    >"$LOGS/gpu_tests.txt" 2>&1
  code=$?
  echo "gpu tests: exit $code in $((SECONDS - s)) s: $(tail -1 "$LOGS/gpu_tests.txt")"; grep -E "isolated 256|GPU time held|FAILED|Error" "$LOGS/gpu_tests.txt" | head
  if [ $code != 0 ]; then tar czf "$OUT/logs.tar.gz" -C "$OUT" logs; exit 1; fi  # no grid on a broken harness
fi
resume=--resume; [ "${FRESH:-0}" = 1 ] && resume=
bench "$OUT/grid.duckdb" server --grid --mode server $resume --time-budget "${BUDGET:-480}"
python3 $PHASES "$OUT/grid.duckdb" server latest | tee "$LOGS/phases.txt"
python3 - "$OUT/grid.duckdb" <<'PY' | tee "$LOGS/vs_8ea6f9af.txt"
import duckdb, sys
con = duckdb.connect(sys.argv[1], read_only=True)
run = con.execute("SELECT run_id FROM runs WHERE mode = 'server' ORDER BY started_at DESC LIMIT 1").fetchone()[0]
n, old, new, old_holds, new_holds = con.execute("""
  SELECT count(*), sum(o.seconds), sum(s.seconds), sum(CAST(o.details->>'$.isolated_hold_s' AS DOUBLE)),
         sum(CAST(s.details->>'$.isolated_hold_s' AS DOUBLE))
  FROM run_configs s JOIN run_configs o ON (o.m, o.n, o.k) = (s.m, s.n, s.k)
  WHERE s.run_id = ? AND o.run_id = '8ea6f9af084746cb8dc166a9691126d3'""", [run]).fetchone()
print(f"run {run[:8]}: {n} configs so far: {new:.1f} s against 8ea6f9af's {old:.1f} s on the same configs "
      f"({new / old:.4f}); holds {new_holds:.2f} s against {old_holds:.2f} s")
PY
tar czf "$OUT/logs.tar.gz" -C "$OUT" logs && rm -rf "$LOGS"
cd "$OUT" && xz -3 -T8 grid.duckdb && ls -la
