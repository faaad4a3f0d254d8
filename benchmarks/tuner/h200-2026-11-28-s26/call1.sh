#!/usr/bin/env bash
# Session 26, device call 1 (issue 15), one H200: session 25's three planned calls in one start
# (benchmarks/tuner/h200-2026-11-28-s25/): call4.sh (search + A/B of the 23 unsearched M = 16384
# configs), call5.sh (ncu of three losers beside torch.matmul and the auto-tuned cuBLASLt
# candidate), call6.sh (the nvjet kernels behind each cuBLASLt heuristic candidate at five
# output-bound shapes). Everything comes back in one all.tar (the tool returns at most 8 files).
# Carried: .whl, .carry/{duckdb-site.tar.xz,cutlass-4.2.0.tar.gz,tunerlib.tar.gz}.
set -u
S25=benchmarks/tuner/h200-2026-11-28-s25
top=$OUT
mkdir -p "$top/ncu" "$top/probe"
OUT=$top bash $S25/call4.sh
OUT=$top/ncu bash $S25/call5.sh
OUT=$top bash $S25/call6.sh
nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv >"$top/gpu.csv"
cd "$top" && tar cf all.tar --exclude=all.tar . && find . -mindepth 1 -not -name all.tar -delete && ls -la
