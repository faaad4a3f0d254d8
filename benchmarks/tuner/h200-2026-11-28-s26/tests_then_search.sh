#!/usr/bin/env bash
# One H200 call of session 26 (calls 2 and 3): tests/gpu/test_tuner_kernels.py on the kernels the
# call's library adds (a pytest -k filter), then a search of CONFIGS_FILE (search only, 48
# candidates a shape) and the A/B of its changed picks against the H200 set, or the set
# CURRENT_MANIFEST names (benchmarks/tuner/search_then_ab.sh). Everything comes back in one all.tar.
#   bash tests_then_search.sh PYTEST_K CONFIGS_FILE SEARCH_SECONDS END_SECONDS
set -u
filter=$1 configs=$2 search_s=$3 end_s=$4
top=$OUT
mkdir -p "$top/t" "$top/s"
OUT=$top/t bash benchmarks/harness/v3/run_device.sh >/dev/null  # wheel, duckdb, the library in /tmp/tb
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
export CUDA_L2_EXPLORER_TUNER_LIB=$(ls -t /tmp/tb/lib/*.so | head -1)
timeout 120 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_tuner_kernels.py -k "$filter" \
  >"$top/t/gpu_tests.log" 2>&1
echo "gpu tests: exit $? $(tail -1 "$top/t/gpu_tests.log")"
OUT=$top/s CURRENT_MANIFEST=${CURRENT_MANIFEST:-kernels/h200_F32F16F16F32/manifest.json} \
  bash benchmarks/tuner/search_then_ab.sh "$configs" "--limit 48" "$search_s" "$end_s"
nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv >"$top/gpu.csv"
cd "$top" && tar cf all.tar --exclude=all.tar . && find . -mindepth 1 -not -name all.tar -delete && ls -la
