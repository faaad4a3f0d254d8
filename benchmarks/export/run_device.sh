#!/usr/bin/env bash
# Issue 6 on the device, in one call from the repository root:
#   CUTLASS_DIR=/path/to/cutlass bash benchmarks/export/run_device.sh
# Exports a tiny (64^3), a skinny (64x8192x4096) and a large (4096^3) config of our kernels in
# the three formats (cuda-l2, torch, cmake) plus the planted SPEC section 4 kernel as a torch
# package with the padding wrapper, builds each (9 CUTLASS builds in parallel, ~3-5 min on 16
# cores), runs each format's own test and compares with torch.matmul (tests/gpu/test_export_device.py).
# Carried: .whl (duckdb, polars, pytest and their needs, as for benchmarks/harness/run_device.sh)
# and CUTLASS 4.2 headers: $CUTLASS_DIR (include/ and tools/util/include/), else a carried
# nvidia-cutlass wheel in .whl. Results land in $OUT.
set -uo pipefail
OUT=${OUT:-/tmp/export-out}
mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl || exit 1
# .whl holds the project's own wheel too (`pip wheel --no-deps -w .whl .` before the call): the
# checkout is not importable as cuda_l2_explorer without an install.
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
export CUDA_L2_EXPLORER_BUILD_CACHE=/tmp/l2x-build
if [ -z "${CUTLASS_DIR:-}" ] && ! python3 -c 'import cutlass_library' 2>/dev/null; then
  echo "CUTLASS headers not found: set CUTLASS_DIR (include/ and tools/util/include/)" | tee "$OUT/device.txt"
  exit 1
fi
{
  date -u +%Y-%m-%dT%H:%M:%SZ
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
  nvcc --version | tail -2
  echo "cmake: $(command -v cmake || echo 'absent (the cmake format is built with nvcc, same flags)')"
  echo "CUTLASS_DIR=${CUTLASS_DIR:-<nvidia-cutlass wheel>}"
  python3 -c 'import sys, torch; print("python", sys.version.split()[0], "torch", torch.__version__, "cuda", torch.version.cuda)'
} >"$OUT/device.txt" 2>&1
cat "$OUT/device.txt"
start=$(date +%s)
timeout 560 python3 -m pytest -q -rA -s -p no:cacheprovider tests/gpu/test_export_device.py 2>&1 | tee "$OUT/gpu_export_tests.txt"
echo "export GPU tests: exit ${PIPESTATUS[0]} in $(( $(date +%s) - start )) s" | tee -a "$OUT/device.txt"
