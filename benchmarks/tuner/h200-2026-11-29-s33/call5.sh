#!/usr/bin/env bash
# Session 33, call 5 (nvidia-h200, one GPU; issue 15): the 157 tiny configs with K = 128-1024 that
# call 1 did not search (call5_configs.txt, smallest M x N first; larger M x N than call 1's 102), on
# library b2ae9ede (its GPU tests passed in call 1): the K-split tensor kernels' first search there.
# Search, old/new/old/new A/B against the H200 set (grid d10fddf2's picks) and the merge into a copy
# (search_ab_merge.sh); the merged manifest waits for the next grid (combine_merges.py).
# Carried: .whl, .carry/{duckdb-site.tar.xz,cutlass-4.2.0.tar.gz,tunerlib.tar.gz}.
set -u
top=$OUT
OUT=$top bash benchmarks/tuner/search_ab_merge.sh benchmarks/tuner/h200-2026-11-29-s33/call5_configs.txt \
  "--limit 48" 200 $((470 - 230 - SECONDS)) kernels/h200_F32F16F16F32
ls -la "$top"
