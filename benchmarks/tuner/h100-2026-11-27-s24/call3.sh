#!/usr/bin/env bash
# Session 24, device call 3 (issue 15): the other memory-bound configs (the skinny and small-K
# regimes but call 2's 38: 268) searched over library 1924024b with the default shortlist, which now
# keeps the candidates the cost model ties with the best (tuner/search_space.py: TIE, TIE_LIMIT),
# search only; then the changed picks benched old, new, old, new in one store beside torch.matmul
# and three cuBLASLt baselines.
# Carried: .whl, .carry/{duckdb-site.tar.xz,tunerlib.tar.gz}.
set -u
D=benchmarks/tuner/h100-2026-11-27-s24
mkdir -p "$OUT/p" "$OUT/ab"
OUT=$OUT/p TUNE_FILE=$D/call3_configs.txt TUNE_ARGS="--no-measure" TUNE_LIMIT=${TUNE_LIMIT:-250} \
  bash benchmarks/harness/v3/run_device.sh retune
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
lib=$(ls -t /tmp/tb/lib/*.so | head -1)
mkdir -p /tmp/s24 && tar xzf "$OUT/p/stores.tar.gz" -C /tmp/s24
bash benchmarks/tuner/ab_picks.sh /tmp/s24/tune.duckdb "$lib" "$OUT/ab" $((565 - SECONDS))
echo "done at $SECONDS s"
