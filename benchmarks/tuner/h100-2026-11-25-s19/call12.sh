#!/usr/bin/env bash
# Session 19, device call 12 (issue 15): call 8's four kernels rebuilt with
# CUTE_SM90_EXTENDED_MMA_SHAPES_ENABLED (cutlass/sm90_gemm.cuh; `build_large_probe.py OUT call8`
# -> .carry/s19/lgl12): the search of the probe's 30 configs with the kept kernels against the
# seven baselines (call7.sh), then call 10's ncu raw page at 12288x8192x512 (the GMMA count).
# Carried: .whl, .carry/duckdb-site.tar.xz, .carry/s19/lgl12.
set -u
D=benchmarks/tuner/h100-2026-11-25-s19
mkdir -p "$OUT/tune" "$OUT/ncu"
LIB=.carry/s19/lgl12 OUT=$OUT/tune bash $D/call7.sh 2>&1 | tail -3
LIB=.carry/s19/lgl12 NCU_PAGE=raw OUT=$OUT/ncu bash $D/call10.sh 2>&1 | tail -3
tar czf "$OUT/call12.tar.gz" -C "$OUT" tune ncu && rm -rf "$OUT/tune" "$OUT/ncu"
