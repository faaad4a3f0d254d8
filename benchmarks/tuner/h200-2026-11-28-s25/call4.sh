#!/usr/bin/env bash
# Session 25, device call 4 (issue 15), one H200: the configs call 2 could not search (call 1 left
# the grid's M = 16384 configs to call 2, after the search list was made) where grid bf5c1b4a has
# the H200 set under 0.97 of the best baseline and K <= 1024 (23, worst first), searched over
# library 009e13bc, search only, then the A/B of the changed picks. Not merged this session: the
# bundled grid must measure the manifest's kernels, and no device time is left for a re-grid.
# Carried: .whl, .carry/{duckdb-site.tar.xz,cutlass-4.2.0.tar.gz,tunerlib.tar.gz}.
set -u
D=benchmarks/tuner/h200-2026-11-28-s25
mkdir -p "$OUT/s" && top=$OUT
OUT=$top/s CURRENT_MANIFEST=kernels/h200_F32F16F16F32/manifest.json bash benchmarks/tuner/search_then_ab.sh $D/call4_configs.txt "" ${TUNE_LIMIT:-50} ${END_S:-150}
cd "$top" && tar cf search.tar s && rm -rf s && ls -la
