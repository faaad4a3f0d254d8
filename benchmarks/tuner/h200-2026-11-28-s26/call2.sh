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
top=$OUT
mkdir -p "$top/t" "$top/s"
OUT=$top/t bash benchmarks/harness/v3/run_device.sh >/dev/null  # wheel, duckdb, the library in /tmp/tb
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
export CUDA_L2_EXPLORER_TUNER_LIB=$(ls -t /tmp/tb/lib/*.so | head -1)
timeout 120 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_tuner_kernels.py \
  -k "e160 or e176 or e144 or e128 or e64" >"$top/t/gpu_tests.log" 2>&1
echo "gpu tests: exit $? $(tail -1 "$top/t/gpu_tests.log")"
OUT=$top/s CURRENT_MANIFEST=kernels/h200_F32F16F16F32/manifest.json \
  bash benchmarks/tuner/search_then_ab.sh $D/call2_configs.txt "--limit 48" ${TUNE_LIMIT:-170} ${END_S:-330}
nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv >"$top/gpu.csv"
cd "$top" && tar cf all.tar --exclude=all.tar . && find . -mindepth 1 -not -name all.tar -delete && ls -la
