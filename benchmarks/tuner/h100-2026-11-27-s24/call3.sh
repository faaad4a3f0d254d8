#!/usr/bin/env bash
# Session 24, device call 3 (issue 15): the other memory-bound configs (the skinny and small-K
# regimes but call 2's 38: 268) searched over library 1924024b with the default shortlist, which now
# keeps the candidates the cost model ties with the best (tuner/search_space.py: TIE, TIE_LIMIT),
# search only; then the changed picks benched old, new, old, new in one store beside torch.matmul
# and three cuBLASLt baselines.
# Carried: .whl, .carry/{duckdb-site.tar.xz,tunerlib.tar.gz}.
set -u
D=benchmarks/tuner/h100-2026-11-27-s24
bash benchmarks/tuner/search_then_ab.sh $D/call3_configs.txt "" ${TUNE_LIMIT:-250} 565
