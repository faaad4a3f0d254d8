#!/usr/bin/env bash
# Session 14, device call 3 (issue 14): graph replay against CUPTI's kernel time, both taken in
# the same sustained state and CUPTI also the harness's way (eager calls after a pause), with
# nvidia-smi logging SM clock and power every 20 ms (benchmarks/harness/v3/replay_cupti_probe.py).
set -u
mkdir -p "$OUT/c3"
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl || exit 1
python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2], filter="data")' .carry/duckdb-site.tar.xz /tmp/site
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu --format=csv -lms 20 >"$OUT/c3/smi.csv" &
smi=$!
python3 benchmarks/harness/v3/replay_cupti_probe.py "$OUT/c3/probe.json" 2>&1 | tee "$OUT/c3/probe.log"
kill $smi
date -u +%s >"$OUT/c3/utc_end.txt"
tar czf "$OUT/c3.tar.gz" -C "$OUT" c3 && rm -rf "$OUT/c3"
