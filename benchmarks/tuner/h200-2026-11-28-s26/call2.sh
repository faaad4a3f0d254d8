#!/usr/bin/env bash
# Session 26, device call 2 (issue 15), one H200: the library with explicit epilogue subtiles
# (tuner/catalog.py: nine output-bound kernels, epi_n) checked, then searched where the H200 set
# loses at small K: tests/gpu/test_tuner_kernels.py on the nine new kernels (7 shapes each), then
# the 78 configs with M, N >= 2048, K <= 1024 under 0.97 of the best baseline in grid bf5c1b4a
# (call2_configs.txt, worst first), search only (48 candidates a shape, the cost model now
# charging the cooperative schedule for its epilogue: tuner/search_space.predict), then the A/B
# of the changed picks against the H200 set (call 1's 11 picks merged).
# Carried: .whl, .carry/{duckdb-site.tar.xz,cutlass-4.2.0.tar.gz,tunerlib.tar.gz}.
set -u
D=benchmarks/tuner/h200-2026-11-28-s26
bash $D/tests_then_search.sh "e160 or e176 or e144 or e128 or e64" $D/call2_configs.txt ${TUNE_LIMIT:-170} ${END_S:-330}
