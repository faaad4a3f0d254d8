#!/usr/bin/env bash
# Session 26, device call 3 (issue 15), one H200: the library with seven more explicit-epilogue
# kernels (cooperative 128x256 / 256x128 / 128x192 with 64-wide subtiles, ping-pong 64x256,
# 64x128, 128x96) checked (tests/gpu/test_tuner_kernels.py on them, 7 shapes each), then searched
# on the 96 non-tiny configs with K <= 2048 under 1.0 of the best baseline in grid bf5c1b4a that
# calls 1-2 did not search (call3_configs.txt, worst first; 48 candidates a shape), then the A/B
# of the changed picks against the H200 set (calls 1-2's 81 picks merged).
# Carried: .whl, .carry/{duckdb-site.tar.xz,cutlass-4.2.0.tar.gz,tunerlib.tar.gz}.
set -u
D=benchmarks/tuner/h200-2026-11-28-s26
bash $D/tests_then_search.sh "coop_ps_sauto_bn_e64 or pp_ps_sauto_bn_e128 and sm90_64 or e96" $D/call3_configs.txt ${TUNE_LIMIT:-140} ${END_S:-280}
