#!/usr/bin/env bash
# Planned for the next session lent an H100 (issue 15; not run here): the 93-kernel library
# (436450237327fb8c2ef1, with the 16 explicit-epilogue kernels of this session) on an H100: the
# GPU tests of those 16 (7 shapes each), then a search (48 candidates a shape) of the H100 set's
# 157 non-tiny configs with K <= 2048 under 1.0 of the best baseline in its bundled grid de536734
# (h100_configs.txt, worst first: 91 large, 40 skinny, 26 small-K), and the A/B of the changed
# picks against the H100 set. ~300 s. Then, here:
#   bash benchmarks/tuner/merge_picks.sh CALL/s/p/tuned/manifest.json CALL/s/ab/picks.duckdb.xz \
#     kernels/h100_F32F16F16F32/manifest.json
# and the H100 set's grid (`SET=kernels/h100_F32F16F16F32 GRID_GPUS=all CLOCK_LOG=1 BUDGET=560
# bash benchmarks/harness/v3/run_device.sh grid`, ~620 s on one H100, ~380 on two), then
# fill_evidence.py, the re-bundle (--replace-kernels --drop-run de536734...) and readme_headline.py.
# Carried: .whl, .carry/{duckdb-site.tar.xz,cutlass-4.2.0.tar.gz,tunerlib.tar.gz}.
set -u
D=benchmarks/tuner/h200-2026-11-28-s26
CURRENT_MANIFEST=kernels/h100_F32F16F16F32/manifest.json bash $D/tests_then_search.sh \
  "e160 or e176 or e144 or e128 or e64 or e96" $D/h100_configs.txt ${TUNE_LIMIT:-130} ${END_S:-300}
